package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/leakmap/leakmap/simulate"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type demoOptions struct {
	out  string
	seed int64
}

func (o *demoOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.out, "out", "leakmap-demo", "output folder")
	f.Int64Var(&o.seed, "seed", simulate.DemoConfig().Seed, "simulation seed")
}

func newDemoCmd(g *globalOptions) *cobra.Command {
	var opts demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Simulate an incident and run every step on it",
		Long: `Simulate a cross-tenant leak in a disaggregated inference cluster, the
seed's incident (launch 27 Aug 2026, withdrawal 9 Sep 14:00 UTC, restored at
19:40 with a larger prefill pool), into DIR/simulated: the logs a provider
keeps (the LiteLLM proxy's spend logs and each SGLang host's prefill and
decode request logs, under real/), the incident file naming them
(incident-real.yaml), the tenant directory and the simulator's ground truth.
Recover the capacity timeline from the engines' start-up lines ('leakmap
preflight', into DIR/preflight), then run the whole pipeline with that
timeline into DIR (the logs joined into one request per call), and print a
short summary and where to look. The demo is deterministic for a given
--seed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	return cmd
}

func runDemo(ctx context.Context, g *globalOptions, opts demoOptions) error {
	simDir := filepath.Join(opts.out, "simulated")
	cfg := simulate.DemoConfig()
	cfg.Seed = opts.seed
	sim, err := simulate.Generate(ctx, g.logger, simDir, cfg)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	fmt.Fprintf(g.stdout, "simulated %d requests (%d triggers in the truth) into %s\n", sim.Requests, sim.Triggers, simDir)
	// The capacity timeline is recovered from the engines' own start-up
	// lines, not typed: the run uses preflight's capacity.csv.
	timeline, err := demoPreflight(ctx, g, filepath.Join(simDir, "real", "engine", "text"), filepath.Join(opts.out, "preflight"))
	if err != nil {
		return err
	}
	// The case is built from the logs a provider really keeps (the
	// proxy's spend logs, the engines' prefill and decode request logs),
	// joined into one request per call: incident-real.yaml's sources.
	// The simulator tears the last line of one proxy export (the export
	// died while writing it; the next day's overlapping export holds that
	// row intact). Ingest names the file as damaged, which stops 'leakmap
	// run' with exit 3; the demo goes on knowingly, as --keep-going does.
	if sim.Real.TornLines > 0 {
		fmt.Fprintf(g.stdout, "planted: %d proxy export(s) ending in a torn line, whose row the next export holds intact; 'leakmap run' stops on such a damaged file (exit 3) unless --keep-going, which the demo uses\n", sim.Real.TornLines)
	}
	s, err := runRun(ctx, g, runOptions{
		incident:  filepath.Join(simDir, "incident-real.yaml"),
		tenants:   filepath.Join(simDir, "tenants.csv"),
		out:       opts.out,
		timeline:  timeline,
		keepGoing: true,
	}, nil)
	if err != nil {
		return err
	}
	w := g.stdout
	fmt.Fprintf(w, "\nWhere to look:\n")
	look := [][2]string{
		{filepath.Join(s.out, "report.html"), "the provider's case report (open in a browser)"},
		{filepath.Join(s.out, "report.xlsx"), "the same, with the Regulator sheet to file"},
		{filepath.Join(s.out, "tenants.csv"), "who may have received or leaked data"},
		{filepath.Join(s.out, "exposures.csv"), "every exposure with its tier and evidence"},
		{filepath.Join(s.out, "outbox") + "/", "one .eml per notice; send with 'leakmap notify send'"},
		{filepath.Join(s.out, "preflight", "findings.csv"), "the hosts whose KV pool was below their context, from their start-up lines"},
		{filepath.Join(simDir, "real") + "/", "the proxy's and the engines' logs the case was built from"},
		{filepath.Join(simDir, "truth") + "/", "the simulator's ground truth, to compare"},
	}
	width := 0
	for _, l := range look {
		width = max(width, len(l[0]))
	}
	for _, l := range look {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
	}
	return nil
}
