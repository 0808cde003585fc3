package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/notify"
	"github.com/leakmap/leakmap/report"
	"github.com/leakmap/leakmap/sweep"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

type runOptions struct {
	incident string
	tenants  string
	out      string
	asOf     string
	timeline string // replaces the incident file's capacity.timeline (preflight's capacity.csv)
	ingest   ingest.Options
	// keepGoing analyses and drafts even after an ingest that met a
	// damaged file (a truncated .gz), which otherwise stops the run.
	keepGoing bool
}

func (o *runOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.incident, "incident", "", "incident file (YAML)")
	f.StringVar(&o.tenants, "tenants", "", "tenant directory (CSV: tenant_id,name,email,language,jurisdiction)")
	f.StringVar(&o.out, "out", "", "output folder (created if needed)")
	f.StringVar(&o.timeline, "timeline", "", "capacity timeline CSV to use instead of the incident file's capacity.timeline (e.g. the capacity.csv 'leakmap preflight' recovered)")
	addAsOfFlag(f, &o.asOf)
	addIngestFlags(f, &o.ingest)
	f.BoolVar(&o.keepGoing, "keep-going", false, "analyse and draft notices even when a log file was damaged (a truncated .gz), which stops the run otherwise: the case then lacks the rest of that file")
}

func newRunCmd(g *globalOptions) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run --incident FILE --tenants FILE --out DIR [LOG...]",
		Short: "Ingest, analyse, report and draft every notice, into one folder",
		Long: `Run every step on a case: ingest LOG... (files, folders, globs) into
DIR/case.duckdb, analyse it for the incident (affected_requests.csv,
exposures.csv, tenants.csv), write report.xlsx and report.html, and draft
every notice into DIR/outbox, each checked for isolation. Nothing is sent:
use 'leakmap notify send' for that. With no LOG argument, the incident
file's sources: are loaded; LOG arguments replace them (read with --preset
or --mapping and the source-key flags).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := runRun(cmd.Context(), g, opts, args)
			return err
		},
	}
	opts.addFlags(cmd.Flags())
	markIngestFlags(cmd)
	required(cmd, "incident", "tenants", "out")
	return cmd
}

// runSummary is what run found, for the demo's closing lines.
type runSummary struct {
	out      string
	ingest   *ingest.Result
	analysis *analysis.Summary
	drafts   *notify.DraftResult
	report   *report.Result
	sweep    *sweep.Summary
}

func runRun(ctx context.Context, g *globalOptions, opts runOptions, logs []string) (*runSummary, error) {
	inc, err := incident.Load(opts.incident)
	if err != nil {
		return nil, err
	}
	if err := replaceTimeline(inc, opts.timeline); err != nil {
		return nil, err
	}
	sources, err := chooseSources(g, inc, logs, opts.ingest, true)
	if err != nil {
		return nil, err
	}
	dir, err := notify.LoadDirectory(opts.tenants)
	if err != nil {
		return nil, err
	}
	// Wording the notices cannot use stops the run before any work or
	// output, not at the draft step after the analysis files are written.
	if err := notify.CheckWording(inc, dir); err != nil {
		return nil, err
	}
	asOf, err := resolveAsOf(opts.asOf, inc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.out, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	db, err := g.openCase(ctx, filepath.Join(opts.out, "case.duckdb"))
	if err != nil {
		return nil, err
	}
	defer db.Close()

	s := &runSummary{out: opts.out}
	opts.ingest.Progress = progressWriter(g)
	joinFromIncident(&opts.ingest.Join, inc)

	fmt.Fprintf(g.stdout, "case %s (incident %s, as of %s)\n", filepath.Join(opts.out, "case.duckdb"), inc.ID, incident.FormatTime(asOf))
	// A damaged file stops the run here, after ingest (its figures are
	// printed), so nobody files a notice on a case that silently lost rows.
	s.ingest, err = ingest.RunSources(ctx, db, g.logger, sources, opts.ingest)
	if s.ingest != nil && (err == nil || errors.Is(err, ingest.ErrDamaged)) {
		printIngest(g.stdout, s.ingest, g.verbose)
	}
	if err != nil {
		if !errors.Is(err, ingest.ErrDamaged) || !opts.keepGoing {
			return nil, err
		}
		fmt.Fprintf(g.stderr, "warning: %v; going on (--keep-going): every figure below lacks those rows\n", err)
	}

	if s.analysis, err = analysis.Run(ctx, db, g.logger, inc); err != nil {
		return nil, err
	}
	if err := analysis.WriteCSV(ctx, db, g.logger, opts.out); err != nil {
		return nil, err
	}
	printAnalysisSummary(g.stdout, s.analysis, opts.out)
	// The sweep needs no threshold: it shows the report where the
	// threshold explains the leak and where it does not.
	if s.sweep, err = sweep.Run(ctx, db, g.logger, sweep.Options{Evidence: inc.Contamination.Evidence}); err != nil {
		return nil, err
	}
	if err := sweep.WriteCSV(ctx, db, g.logger, opts.out); err != nil {
		return nil, err
	}
	printSweepSummary(g.stdout, s.sweep, opts.out)

	outbox := filepath.Join(opts.out, "outbox")
	if s.drafts, err = notify.Draft(ctx, db, g.logger, inc, dir, outbox, asOf); err != nil {
		return nil, err
	}
	if s.report, err = report.Write(ctx, db, g.logger, inc, opts.out, asOf); err != nil {
		return nil, err
	}
	fmt.Fprintf(g.stdout, "notices: %d tenant notices drafted (%d ready, %d blocked by the isolation check, %d cannot be notified), and the regulator notice (%s) (see %s)\n",
		s.drafts.Tenant.Drafted, s.drafts.Tenant.Ready, s.drafts.Tenant.Blocked, s.drafts.Tenant.CannotNotify, s.drafts.Regulator.Status, filepath.Join(outbox, "index.csv"))
	fmt.Fprintf(g.stdout, "wrote %s: case.duckdb, affected_requests.csv, exposures.csv, tenants.csv, trigger_disagreements.csv, sweep.csv, sweep_days.csv, report.xlsx, report.html, outbox/\n", opts.out)
	if s.drafts.Blocked > 0 {
		return s, errs.Blocked("%d notice(s) blocked by the isolation check; see %s", s.drafts.Blocked, filepath.Join(outbox, "index.csv"))
	}
	return s, nil
}

// progressWriter is stderr when it is a terminal (and not --quiet), else nil:
// progress bars never end up in logs or CI output.
func progressWriter(g *globalOptions) io.Writer {
	if f, ok := g.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !g.quiet {
		return g.stderr
	}
	return nil
}

// resolveAsOf picks the date notices and reports bear: the flag, else the
// incident file's as_of, else now (to the second, so outputs stay stable
// within a run).
func resolveAsOf(flag string, inc *incident.Incident) (time.Time, error) {
	if flag != "" {
		t, err := incident.ParseTime(flag)
		if err != nil {
			return time.Time{}, errs.Usage("--as-of: %w", err)
		}
		if err := inc.CheckAsOf(t); err != nil {
			return time.Time{}, errs.Usage("--as-of: %w", err)
		}
		return t, nil
	}
	if inc.AsOf != nil {
		return *inc.AsOf, nil
	}
	return time.Now().UTC().Truncate(time.Second), nil
}
