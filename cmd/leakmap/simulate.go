package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/leakmap/leakmap/simulate"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type simulateOptions struct {
	out string
	cfg simulate.Config
}

func (o *simulateOptions) addFlags(f *pflag.FlagSet) {
	cfg := &o.cfg
	f.StringVar(&o.out, "out", "", "folder to write the simulated case into (required)")
	f.Int64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	f.IntVar(&cfg.Requests, "requests", cfg.Requests, "requests to log, all models and tenants")
	f.IntVar(&cfg.Tenants, "tenants", cfg.Tenants, "tenants of the service")
	f.StringVar(&cfg.Allocator, "allocator", cfg.Allocator, "decode pool allocator: sorted, fifo or lifo")
	f.BoolVar(&cfg.Noise, "noise", cfg.Noise, "add duplicates, truncated lines, missing decode instances, mixed offsets")
	f.Int64Var(&cfg.PageSize, "page-size", cfg.PageSize, "decode pool page size in tokens")
	f.BoolVar(&cfg.DirectoryGaps, "directory-gaps", cfg.DirectoryGaps, "leave one affected tenant out of tenants.csv and list one with no email address")
	f.BoolVar(&cfg.CSVPart, "csv-part", cfg.CSVPart, "write the first day's log part as CSV")
	f.IntVar(&cfg.DecodeInstances, "decode-instances", cfg.DecodeInstances, "decode instances")
	f.Float64Var(&cfg.TextShare, "text-share", cfg.TextShare, "share of tenants that log prompt and response text")
	f.BoolVar(&cfg.Templates, "templates", cfg.Templates, "a third of the tenants start their prompts with one of three shared templates")
	f.BoolVar(&cfg.CanonicalOnly, "canonical-only", cfg.CanonicalOnly, "write the canonical logs only, not the real layouts (for scale benchmarks: 4x faster)")
}

func newSimulateCmd(g *globalOptions) *cobra.Command {
	opts := simulateOptions{cfg: simulate.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "simulate --out DIR [--seed N] [--requests N] [--tenants N] [--allocator sorted|fifo|lifo] [--noise=true|false] [--page-size N]",
		Short: "Write a simulated incident: logs, incident file, tenant directory, ground truth",
		Long: `Simulate an incident on a prefill/decode-disaggregated cluster and write into DIR:
  logs/          rotated request logs (gzip JSON Lines, one CSV part, one empty part)
  incident.yaml  the incident file (with as_of, so outputs are deterministic)
  real/          the same calls in the logs a provider keeps: the LiteLLM proxy's
                 spend logs (daily psql CSV exports) and each SGLang host's prefill
                 and decode JSON request logs (hourly parts, some gzipped)
  incident-real.yaml  the same incident, with sources: naming real/
  capacity.csv   the capacity timeline they refer to
  tenants.csv    the tenant directory (one affected tenant missing, one with no email address)
  truth/         the ground truth: affected_requests.csv, exposures.csv, unknown_slots.csv,
                 and for real/ each call's records (real_calls.csv) and the noise planted
                 there (real_noise.csv)

The truth replays the decode pools exactly as the incident file's allocator
says, on the clean rows, before the noise (duplicates, truncated lines,
missing decode instances, mixed time offsets; in real/ also lost prefill or
decode records, overlapping exports, a torn last line, repeated bootstrap
rooms) is added. Request ids are the gateway's in both. The same flags give
byte-identical files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSimulate(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	required(cmd, "out")
	return cmd
}

func runSimulate(ctx context.Context, g *globalOptions, opts simulateOptions) error {
	sum, err := simulate.Generate(ctx, g.logger, opts.out, opts.cfg)
	if err != nil {
		return err
	}
	w := g.stdout
	fmt.Fprintf(w, "simulated %d requests (%d log lines, allocator %s, noise %t) into %s\n",
		sum.Requests, sum.Lines, opts.cfg.Allocator, opts.cfg.Noise, opts.out)
	fmt.Fprintf(w, "  triggers %d, exposures %d (%d cross-tenant, %d with leaked text, %d of them text-proven), recipients %d, source tenants %d, replay warnings %d\n",
		sum.Triggers, sum.TruthExposures, sum.CrossTenant, sum.Copies, sum.ConfirmedTruth, sum.Recipients, sum.Sources, sum.ReplayWarnings)
	r := sum.Real
	if r.Incident == "" { // --canonical-only
		fmt.Fprintf(w, "  logs:      %s\n  incident:  %s\n  tenants:   %s\n  truth:     %s\n",
			sum.Logs, sum.Incident, sum.Tenants, filepath.Join(opts.out, "truth"))
		fmt.Fprintf(w, "next: leakmap run --incident %s --tenants %s --out OUT %s\n", sum.Incident, sum.Tenants, sum.Logs)
		return nil
	}
	fmt.Fprintf(w, "  logs:      %s\n  incident:  %s\n  real logs: %s (incident %s)\n  tenants:   %s\n  truth:     %s\n",
		sum.Logs, sum.Incident, r.Dir, r.Incident, sum.Tenants, filepath.Join(opts.out, "truth"))
	fmt.Fprintf(w, "  real layouts: %d gateway rows in %d exports (%d duplicate copies, %d torn line), %d prefill and %d decode records in %d files (%d lost prefill, %d lost decode), %d rooms drawn twice, %d calls cut at prefill\n",
		r.GatewayRows, r.GatewayFiles, r.GatewayDuplicates, r.TornLines, r.PrefillRecords, r.DecodeRecords, r.EngineFiles,
		r.LostPrefill, r.LostDecode, r.RoomRepeats, r.CutAtPrefill)
	fmt.Fprintf(w, "next: leakmap run --incident %s --tenants %s --out OUT %s\n", sum.Incident, sum.Tenants, sum.Logs)
	if r.TornLines > 0 {
		// A torn last line makes its file damaged: run stops after ingest.
		fmt.Fprintf(w, "  or, on the real layouts: leakmap run --incident %s --tenants %s --out OUT --keep-going\n", r.Incident, sum.Tenants)
		fmt.Fprintf(w, "  (an export there ends in a torn line, its row intact in the next export: without --keep-going, run stops after ingest with exit 3)\n")
	} else {
		fmt.Fprintf(w, "  or, on the real layouts: leakmap run --incident %s --tenants %s --out OUT\n", r.Incident, sum.Tenants)
	}
	return nil
}
