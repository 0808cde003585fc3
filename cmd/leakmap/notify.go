package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/notify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newNotifyCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify",
		Short: "Draft, check and send the notices to tenants and the regulator",
		Long: `Draft one notice per affected tenant (covering every role it has) and one
for the regulator, check that no notice reveals another tenant, and send them
exactly once through SMTP, with a ledger in the case database.`,
	}
	for _, sub := range []*cobra.Command{newNotifyDraftCmd(g), newNotifyCheckCmd(g), newNotifySendCmd(g)} {
		sub.Long += "\n\n" + errs.ExitCodesHelp
		cmd.AddCommand(sub)
	}
	return cmd
}

type notifyDraftOptions struct {
	db, incident, tenants, out, asOf string
}

func (o *notifyDraftOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database")
	f.StringVar(&o.incident, "incident", "", "incident file (YAML)")
	f.StringVar(&o.tenants, "tenants", "", "tenant directory (CSV tenant_id,name,email,language,jurisdiction)")
	f.StringVar(&o.out, "out", "", "outbox folder")
	addAsOfFlag(f, &o.asOf)
}

func newNotifyDraftCmd(g *globalOptions) *cobra.Command {
	var opts notifyDraftOptions
	cmd := &cobra.Command{
		Use:   "draft --db CASE --incident FILE --tenants FILE --out OUTBOX [--as-of T]",
		Short: "Write every notice as an .eml file in OUTBOX, with index.csv, and check them",
		Long: `Write one RFC 5322 .eml per notice into OUTBOX (every tenant of the case's
tenants table, and the regulator), OUTBOX/index.csv listing every notice with
its status (ready, blocked, cannot_notify) and reason, and the isolation
manifest; rewrite the notices table; run the isolation check on every draft.
The notices' Date, and the time the 72-hour deadline is judged against, is
--as-of, else the incident file's as_of, else now. Same inputs and as-of:
byte-identical files. Exits 4 when a notice is blocked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNotifyDraft(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	required(cmd, "db", "incident", "tenants", "out")
	return cmd
}

func runNotifyDraft(ctx context.Context, g *globalOptions, opts notifyDraftOptions) error {
	inc, err := incident.Load(opts.incident)
	if err != nil {
		return err
	}
	asOf, err := resolveAsOf(opts.asOf, inc)
	if err != nil {
		return err
	}
	dir, err := notify.LoadDirectory(opts.tenants)
	if err != nil {
		return err
	}
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := notify.Draft(ctx, db, g.logger, inc, dir, opts.out, asOf)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "drafted %d tenant notices in %s: %d ready, %d blocked, %d cannot notify; and the regulator notice: %s (see %s/index.csv)\n",
		res.Tenant.Drafted, res.Outbox, res.Tenant.Ready, res.Tenant.Blocked, res.Tenant.CannotNotify, res.Regulator.Status, res.Outbox)
	for _, n := range res.Notices {
		if n.Status != notify.StatusReady {
			fmt.Fprintf(g.stdout, "  %s %s: %s\n", n.Status, n.File, n.Reason)
		}
	}
	if res.Blocked > 0 {
		return errs.Blocked("%d notice(s) blocked by the isolation check; they will not be sent", res.Blocked)
	}
	return nil
}

func newNotifyCheckCmd(g *globalOptions) *cobra.Command {
	var dbPath string
	cmd := &cobra.Command{
		Use:   "check [--db CASE] OUTBOX",
		Short: "Run the isolation check on every notice of an outbox",
		Long: `Check that no notice holds another tenant's id, name, email or request id,
or any logged text. Without --db, from the outbox alone (its .eml files and
isolation manifest); with --db, the manifest is rebuilt from the case
database instead of trusting the outbox's copy, and an outbox manifest that
differs from it fails too. Lists each failing notice with the reason; exits 4
if any fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res *notify.CheckResult
			var err error
			if dbPath != "" {
				db, oerr := g.openCase(cmd.Context(), dbPath)
				if oerr != nil {
					return oerr
				}
				defer db.Close()
				res, err = notify.CheckCase(cmd.Context(), db, args[0])
			} else {
				res, err = notify.Check(cmd.Context(), args[0])
			}
			if err != nil {
				return errs.Usage("%w", err)
			}
			for _, f := range res.Failures {
				fmt.Fprintf(g.stdout, "FAIL %s: %s\n", f.File, f.Reason)
			}
			fmt.Fprintf(g.stdout, "checked %d notices: %d failed\n", res.Checked, len(res.Failures))
			if len(res.Failures) > 0 {
				return errs.Blocked("%d notice(s) fail the isolation check", len(res.Failures))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "case database: rebuild the manifest from it instead of trusting the outbox's copy")
	return cmd
}

type notifySendOptions struct {
	db, outbox string
	send       notify.SendOptions
}

func (o *notifySendOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database")
	f.StringVar(&o.outbox, "outbox", "", "outbox folder written by 'notify draft'")
	f.BoolVar(&o.send.Send, "send", false, "really send (default: dry run)")
	f.BoolVar(&o.send.RetryPermanent, "retry-permanent", false, "send again to addresses that refused with a permanent (5xx) error")
	f.BoolVar(&o.send.Supersede, "supersede", false, "send notices redrafted with other content after an earlier version was accepted, as new messages that supersede it")
	f.StringVar(&o.send.Host, "smtp-host", "", "SMTP server host")
	f.IntVar(&o.send.Port, "smtp-port", 0, "SMTP port (default 587 starttls, 465 tls, 25 none)")
	f.StringVar(&o.send.Username, "smtp-user", "", "SMTP user (authentication when set)")
	f.StringVar(&o.send.Password, "smtp-password", "", "SMTP password (prefer LEAKMAP_SMTP_PASSWORD)")
	f.StringVar(&o.send.TLS, "smtp-tls", "starttls", "starttls, tls or none")
	f.StringVar(&o.send.From, "from", "", "envelope sender (default: each notice's From)")
	f.Float64Var(&o.send.RatePerSecond, "rate", 10, "at most this many messages per second (0: no limit)")
}

// smtpFromEnv fills the SMTP settings not given as flags from the
// LEAKMAP_SMTP_* environment variables.
func smtpFromEnv(f *pflag.FlagSet, o *notify.SendOptions) error {
	env := func(flag, name string, dst *string) {
		if !f.Changed(flag) && os.Getenv(name) != "" {
			*dst = os.Getenv(name)
		}
	}
	env("smtp-host", "LEAKMAP_SMTP_HOST", &o.Host)
	env("smtp-user", "LEAKMAP_SMTP_USER", &o.Username)
	env("smtp-password", "LEAKMAP_SMTP_PASSWORD", &o.Password)
	env("smtp-tls", "LEAKMAP_SMTP_TLS", &o.TLS)
	env("from", "LEAKMAP_SMTP_FROM", &o.From)
	if p := os.Getenv("LEAKMAP_SMTP_PORT"); p != "" && !f.Changed("smtp-port") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return errs.Usage("LEAKMAP_SMTP_PORT: %q is not a port number", p)
		}
		o.Port = n
	}
	return nil
}

func newNotifySendCmd(g *globalOptions) *cobra.Command {
	var opts notifySendOptions
	cmd := &cobra.Command{
		Use:   "send --db CASE --outbox OUTBOX [--send] [SMTP flags]",
		Short: "Send the ready notices through SMTP (a dry run unless --send)",
		Long: `Send every ready notice to each of its addresses not yet recorded as
having accepted it in the send ledger (table send_ledger, one row per
address), and never again to one that has: a rerun after a crash or an SMTP
failure resumes. An address that answers 4xx (or does not answer) is retried
on the next run; one that answers 5xx is recorded with the server's reply and
retried only with --retry-permanent. A notice is delivered when one of its
addresses accepted it; the summary lists the notices no address accepted,
and the exit status is 1 while there is one. A notice redrafted with other
content after an earlier version was accepted is a correction: it is listed
and held, and sent only with --supersede, as a new message (its own
Message-ID, Supersedes and References naming the first, and a line saying so
in its language). Blocked and cannot-notify
notices are never sent. Without
--send, only lists what would be sent. SMTP settings fall back to the
environment: LEAKMAP_SMTP_HOST, LEAKMAP_SMTP_PORT, LEAKMAP_SMTP_USER,
LEAKMAP_SMTP_PASSWORD, LEAKMAP_SMTP_TLS (starttls|tls|none), LEAKMAP_SMTP_FROM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := smtpFromEnv(cmd.Flags(), &opts.send); err != nil {
				return err
			}
			return runNotifySend(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	required(cmd, "db", "outbox")
	return cmd
}

func runNotifySend(ctx context.Context, g *globalOptions, opts notifySendOptions) error {
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := notify.Send(ctx, db, g.logger, opts.outbox, opts.send)
	if res != nil {
		if opts.send.Send {
			fmt.Fprintf(g.stdout, "sent %d, already accepted %d, failed %d (addresses: %d deferred, retried on the next run; %d rejected)\n",
				res.Sent, res.AlreadyAccepted, res.Failed, res.Deferred, res.Rejected)
		} else {
			fmt.Fprintf(g.stdout, "dry run: %d notices would be sent, %d already accepted, %d failed checks (use --send to send)\n", res.DryRun, res.AlreadyAccepted, res.Failed)
		}
		for _, u := range res.Undelivered {
			who := "regulator"
			if u.TenantID != "" {
				who = "tenant " + u.TenantID
			}
			fmt.Fprintf(g.stdout, "  no address accepted %s (%s): %s\n", who, u.File, u.Reason)
		}
		for _, u := range res.Held {
			fmt.Fprintf(g.stdout, "  held %s: %s\n", u.File, u.Reason)
		}
	}
	return err
}
