package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/incident"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type analyzeOptions struct {
	db, incident, out string
}

func (o *analyzeOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database (DuckDB file)")
	f.StringVar(&o.incident, "incident", "", "incident file (YAML)")
	f.StringVar(&o.out, "out", "", "folder for the CSV outputs")
}

func newAnalyzeCmd(g *globalOptions) *cobra.Command {
	var opts analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze --db CASE --incident FILE --out DIR",
		Short: "Find the affected requests and map every exposure (source -> trigger) with tier and evidence",
		Long: `Analyze a case database for the incident: find the triggers (requests in scope
whose prompt exceeded the prefill KV pool in force), replay the decode pools'
allocator (or apply the residency model), match hashed shingles, and write
affected_requests.csv, exposures.csv and tenants.csv into DIR.

Tiers: confirmed (the trigger's response shares text with the source's prompt),
probable (the source's KV was in the slots the trigger got), possible (the
replay cannot place the source or the trigger). Evidence never holds text.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	required(cmd, "db", "incident", "out")
	return cmd
}

func runAnalyze(ctx context.Context, g *globalOptions, opts analyzeOptions) error {
	inc, err := incident.Load(opts.incident)
	if err != nil {
		return err
	}
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	sum, err := analysis.Run(ctx, db, g.logger, inc)
	if err != nil {
		return err
	}
	if err := analysis.WriteCSV(ctx, db, g.logger, opts.out); err != nil {
		return err
	}
	printAnalysisSummary(g.stdout, sum, opts.out)
	return nil
}

// printAnalysisSummary prints the figures of an analysis and the files written.
func printAnalysisSummary(w io.Writer, sum *analysis.Summary, outDir string) {
	fmt.Fprintf(w, "affected requests: %d (recipient tenants: %d)\n", sum.Triggers, sum.RecipientTenants)
	fmt.Fprintf(w, "exposures: %d confirmed, %d probable, %d possible (%d cross-tenant, %d self)\n",
		sum.Exposures[analysis.TierConfirmed], sum.Exposures[analysis.TierProbable], sum.Exposures[analysis.TierPossible],
		sum.CrossTenant, sum.SelfExposures)
	fmt.Fprintf(w, "source tenants (cross-tenant): %d\n", sum.SourceTenants)
	if sum.UnattributedTriggers > 0 || sum.UnattributedSources > 0 {
		fmt.Fprintf(w, "unattributed (engine records no gateway record claims; never notified): %d affected requests, %d source requests\n",
			sum.UnattributedTriggers, sum.UnattributedSources)
	}
	if sum.CutTriggers > 0 || sum.Disagreements > 0 {
		fmt.Fprintf(w, "cut at prefill (the bug's fingerprint): %d affected requests; %d disagreements with the capacity test (trigger_disagreements.csv)\n",
			sum.CutTriggers, sum.Disagreements)
	}
	if sum.ReplayedRequests > 0 {
		rate := float64(sum.ReplayedRequests) / max(sum.ReplayTime.Seconds(), 1e-9)
		fmt.Fprintf(w, "replay: %d requests in %.2fs (%.0f requests/s), %d warnings\n",
			sum.ReplayedRequests, sum.ReplayTime.Seconds(), rate, sum.ReplayWarnings)
	}
	fmt.Fprintf(w, "analysis time: %.2fs\n", sum.Elapsed.Seconds())
	for _, f := range analysis.OutputFiles() {
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(outDir, f))
	}
}
