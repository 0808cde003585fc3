package main

import (
	"context"
	"fmt"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type reportOptions struct {
	db, incident, out, asOf string
}

func (o *reportOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database (DuckDB file)")
	f.StringVar(&o.incident, "incident", "", "incident file (YAML)")
	f.StringVar(&o.out, "out", "", "folder for the reports and exports")
	addAsOfFlag(f, &o.asOf)
}

func newReportCmd(g *globalOptions) *cobra.Command {
	var opts reportOptions
	cmd := &cobra.Command{
		Use:   "report --db CASE --incident FILE --out DIR [--as-of TIME]",
		Short: "Write report.xlsx, report.html and the Parquet/Arrow exports of the evidence",
		Long: `Write the provider's internal case report from the case database into DIR:

  report.xlsx   Summary, Regulator (the GDPR Art. 33 items to file), Timeline,
                Per day (with a chart), Tenants, Exposures, Affected requests,
                Ingest (files and SHA-256) and Rejected rows (file, line, reason)
  report.html   one self-contained page: the summary, prompt length over time
                against the KV pool, affected requests per day, the tenant
                exposure map, and the tables (viewable offline, printable)
  tenants, exposures, affected_requests as .parquet and .arrow (Arrow IPC file)

Every figure is a query on the case database, the same as the CSV outputs'.
No logged text (prompts, responses, raw rejected lines) is written.
--as-of dates the report and decides whether the 72-hour deadline is met; it
defaults to the incident file's as_of, else now. The same case and --as-of
give byte-identical files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.Context(), g, opts)
		},
	}
	opts.addFlags(cmd.Flags())
	required(cmd, "db", "incident", "out")
	return cmd
}

func runReport(ctx context.Context, g *globalOptions, opts reportOptions) error {
	inc, err := incident.Load(opts.incident)
	if err != nil {
		return err
	}
	asOf, err := resolveAsOf(opts.asOf, inc)
	if err != nil {
		return err
	}
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := report.Write(ctx, db, g.logger, inc, opts.out, asOf)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "affected requests: %d, recipient tenants: %d, source tenants: %d, cross-tenant exposures: %d\n",
		res.AffectedRequests, res.RecipientTenants, res.SourceTenants, res.CrossExposures)
	for _, f := range res.Files {
		fmt.Fprintf(g.stdout, "wrote %s\n", f)
	}
	return nil
}
