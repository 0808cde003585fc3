package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/sweep"
)

type sweepOptions struct {
	db, out, incident string
	models            []string
	since, until      string
}

func (o *sweepOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database (DuckDB file)")
	f.StringVar(&o.out, "out", "", "folder for sweep.csv and sweep_days.csv")
	f.StringVar(&o.incident, "incident", "", "incident file: only contamination.evidence is read (default thresholds without it)")
	f.StringSliceVar(&o.models, "models", nil, "models to sweep, comma-separated (default: every model)")
	f.StringVar(&o.since, "since", "", "sweep responses from this time on (RFC 3339)")
	f.StringVar(&o.until, "until", "", "sweep responses before this time (RFC 3339)")
}

func newSweepCmd(g *globalOptions) *cobra.Command {
	var opts sweepOptions
	cmd := &cobra.Command{
		Use:   "sweep --db CASE --out DIR [--incident FILE] [--models M,...] [--since T --until T]",
		Short: "Find leaks nobody has explained yet: responses that hold another tenant's earlier prompt text",
		Long: `Compare every logged response of the case with the earlier prompts of the other
tenants of the same model (any instance), with the confirmed tier's rules: a
strong match (enough shared shingles and a long enough shared run of words)
made of specific text (not the response's own prompt, not text the prompts of
several tenants share). No incident, window or threshold is needed; with
--incident only contamination.evidence is read.

Writes sweep.csv (one row per strong match; no text) and sweep_days.csv (per
UTC day and model: responses with logged text, leaking responses, source and
recipient tenants), and prints the window and models the leaks suggest. Texts
are fingerprinted once into the case database: a later sweep after new logs
hashes only the new rows.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSweep(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	required(cmd, "db", "out")
	return cmd
}

func runSweep(ctx context.Context, g *globalOptions, opts sweepOptions) error {
	so := sweep.Options{Models: opts.models, Evidence: incident.DefaultEvidence}
	if opts.incident != "" {
		ev, err := incident.LoadEvidence(opts.incident)
		if err != nil {
			return err
		}
		so.Evidence = ev
	}
	for _, t := range []struct {
		flag, v string
		dst     **time.Time
	}{{"since", opts.since, &so.Since}, {"until", opts.until, &so.Until}} {
		if t.v == "" {
			continue
		}
		ts, err := incident.ParseTime(t.v)
		if err != nil {
			return errs.Usage("--%s: %v", t.flag, err)
		}
		*t.dst = &ts
	}
	if so.Since != nil && so.Until != nil && !so.Until.After(*so.Since) {
		return errs.Usage("--until must be after --since")
	}
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	sum, err := sweep.Run(ctx, db, g.logger, so)
	if err != nil {
		return err
	}
	if err := sweep.WriteCSV(ctx, db, g.logger, opts.out); err != nil {
		return err
	}
	printSweepSummary(g.stdout, sum, opts.out)
	return nil
}

// printSweepSummary prints what the sweep found and the window it suggests.
func printSweepSummary(w io.Writer, sum *sweep.Summary, outDir string) {
	fmt.Fprintf(w, "sweep: %d responses with logged text compared, %d strong matches with another tenant's earlier prompt\n",
		sum.Responses, sum.Matches)
	if sum.Candidates > sum.Matches {
		fmt.Fprintf(w, "sweep: strongest match below the thresholds: rare=%d run=%d\n", sum.WeakRare, sum.WeakRun)
	}
	if len(sum.Windows) == 0 {
		fmt.Fprintln(w, "sweep: no leak found")
	}
	var models []string
	for _, m := range sum.Windows {
		models = append(models, m.Model)
		fmt.Fprintf(w, "sweep: %s: %d leaking responses from %s to %s\n", m.Model, m.LeakingResponses,
			incident.FormatTime(m.First), incident.FormatTime(m.Last))
	}
	if len(sum.Windows) > 0 {
		first, last := sum.Windows[0].First, sum.Windows[0].Last
		for _, m := range sum.Windows[1:] {
			if m.First.Before(first) {
				first = m.First
			}
			if m.Last.After(last) {
				last = m.Last
			}
		}
		fmt.Fprintf(w, "sweep suggests: models [%s], window {start: %s, end: %s} (first leak, and just after the last)\n",
			strings.Join(models, ", "), incident.FormatTime(first), incident.FormatTime(last.Add(time.Second).Truncate(time.Second)))
	}
	for _, f := range sweep.Files {
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(outDir, f))
	}
}
