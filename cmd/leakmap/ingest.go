package main

import (
	"context"
	"fmt"
	"io"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type ingestCmdOptions struct {
	db     string
	ingest ingest.Options
}

func (o *ingestCmdOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database (created if missing)")
	addIngestFlags(f, &o.ingest)
}

func newIngestCmd(g *globalOptions) *cobra.Command {
	var opts ingestCmdOptions
	cmd := &cobra.Command{
		Use:   "ingest --db CASE.duckdb [--format F] [--preset LAYOUT | --mapping FILE] [--role R] [--model M] [--timezone Z] [--tenant-field PATH | --tenant T] LOG...",
		Short: "Load request logs into a case database, losing nothing",
		Long: `Load request logs (files, folders, globs; JSON Lines, CSV or Parquet; gzip or
zstd compressed) into the case database. Each file loads all or nothing
(a crash or Ctrl-C leaves no part of it behind) and is recorded with its SHA-256 in ingest_files; a file already loaded is
skipped. Every record read is loaded, rejected (kept in rejected_rows with
file, line, reason and raw text), or counted as a duplicate:
read = loaded + rejected + duplicates, per file and in total.

Layouts (--preset): canonical (default: leakmap's own rows, loaded into
requests), sglang (SGLang's JSON request log; --role prefill, decode or
engine; --model), litellm-spendlogs (LiteLLM_SpendLogs as psql's CSV or JSON
Lines), litellm-payload (LiteLLM's StandardLoggingPayload), cloudflare-aigw
(Cloudflare AI Gateway pages or rows; --tenant for the export's account),
otlp-genai (OpenTelemetry GenAI spans; --role). engine and gateway are the
old names of sglang and cloudflare-aigw. Records of every layout but
canonical are kept in source_records, one per call and host, with their
file and line, and joined into requests. --mapping FILE reads any other
layout, or overrides a named one (extends: LAYOUT): see docs/layouts.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd.Context(), g, opts, args)
		},
	}
	opts.addFlags(cmd.Flags())
	markIngestFlags(cmd)
	required(cmd, "db")
	return cmd
}

func runIngest(ctx context.Context, g *globalOptions, opts ingestCmdOptions, logs []string) error {
	opts.ingest.Progress = progressWriter(g)
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := ingest.Run(ctx, db, g.logger, logs, opts.ingest)
	if res != nil {
		printIngest(g.stdout, res)
	}
	return err
}

// printIngest prints one line per file and the totals.
func printIngest(w io.Writer, res *ingest.Result) {
	already := 0
	for _, f := range res.Files {
		switch {
		case f.AlreadyLoaded:
			already++
			fmt.Fprintf(w, "%s: already loaded (sha256 %s), nothing added\n", f.Path, f.SHA256[:12])
		default:
			flag := ""
			if f.NameReused {
				flag = " [name loaded before with other content]"
			}
			kind := ""
			if f.Role != "" && f.Role != "canonical" {
				kind = fmt.Sprintf(" (%s %s, %s)", f.Preset, f.Role, f.Source)
			}
			fmt.Fprintf(w, "%s: %s/%s%s, read %d, loaded %d, rejected %d, duplicates %d, conflicts %d%s\n",
				f.Path, f.Format, f.Compression, kind, f.Read, f.Loaded, f.Rejected, f.Duplicates, f.Conflicts, flag)
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "%s: skipped, %s\n", s.Path, s.Reason)
	}
	fmt.Fprintf(w, "read %d, loaded %d, rejected %d, duplicates %d (conflicts %d, files %d, already loaded %d)\n",
		res.Read, res.Loaded, res.Rejected, res.Duplicates, res.Conflicts, len(res.Files), already)
	if res.Join != nil {
		fmt.Fprintln(w, res.Join.Summary())
	}
}

// joinFromIncident fills the tolerances no flag gave from the incident file.
func joinFromIncident(o *ingest.JoinOptions, inc *incident.Incident) {
	if o.RoomTolerance == 0 {
		o.RoomTolerance = inc.Join.RoomTolerance
	}
	if o.GatewayTolerance == 0 {
		o.GatewayTolerance = inc.Join.GatewayTolerance
	}
}
