package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/incident"
	"github.com/spf13/cobra"
)

func newAnalyzeCmd(g *globalOptions) *cobra.Command {
	var dbPath, incidentPath, outDir string
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
			inc, err := incident.Load(incidentPath)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			db, err := g.openCase(ctx, dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			sum, err := analysis.Run(ctx, db, g.logger, inc)
			if err != nil {
				return err
			}
			if err := analysis.WriteCSV(ctx, db, outDir); err != nil {
				return err
			}
			printAnalysisSummary(g.stdout, sum, outDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "case database (DuckDB file)")
	cmd.Flags().StringVar(&incidentPath, "incident", "", "incident file (YAML)")
	cmd.Flags().StringVar(&outDir, "out", "", "folder for the CSV outputs")
	required(cmd, "db", "incident", "out")
	return cmd
}

// printAnalysisSummary prints the figures of an analysis and the files written.
func printAnalysisSummary(w io.Writer, sum *analysis.Summary, outDir string) {
	fmt.Fprintf(w, "affected requests: %d (recipient tenants: %d)\n", sum.Triggers, sum.RecipientTenants)
	fmt.Fprintf(w, "exposures: %d confirmed, %d probable, %d possible (%d cross-tenant, %d self)\n",
		sum.Exposures[analysis.TierConfirmed], sum.Exposures[analysis.TierProbable], sum.Exposures[analysis.TierPossible],
		sum.CrossTenant, sum.SelfExposures)
	fmt.Fprintf(w, "source tenants (cross-tenant): %d\n", sum.SourceTenants)
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
