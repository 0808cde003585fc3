package main

import (
	"context"
	"fmt"
	"io"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type ingestCmdOptions struct {
	db       string
	incident string
	ingest   ingest.Options
}

func (o *ingestCmdOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.db, "db", "", "case database (created if missing)")
	f.StringVar(&o.incident, "incident", "", "incident file: with no LOG argument, load its sources: (and take its join: tolerances)")
	addIngestFlags(f, &o.ingest)
}

func newIngestCmd(g *globalOptions) *cobra.Command {
	var opts ingestCmdOptions
	cmd := &cobra.Command{
		Use:   "ingest --db CASE.duckdb (--incident FILE | [--format F] [--preset LAYOUT | --mapping FILE] [--role R] [--model M] [--timezone Z] [--tenant-field PATH | --tenant T] LOG...)",
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
layout, or overrides a named one (extends: LAYOUT): see docs/layouts.md.

With --incident FILE and no LOG argument, the incident file's sources:
are loaded, each with its own layout and keys.`,
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
	var inc *incident.Incident
	if opts.incident != "" {
		var err error
		if inc, err = incident.Load(opts.incident); err != nil {
			return err
		}
		joinFromIncident(&opts.ingest.Join, inc)
	}
	sources, err := chooseSources(g, inc, logs, opts.ingest, false)
	if err != nil {
		return err
	}
	db, err := g.openCase(ctx, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := ingest.RunSources(ctx, db, g.logger, sources, opts.ingest)
	if res != nil {
		printIngest(g.stdout, res, g.verbose)
	}
	return err
}

// printIngest prints the files loaded (each, or past a few the notable ones
// and a line per source) and the totals.
func printIngest(w io.Writer, res *ingest.Result, all bool) {
	// A fleet's hourly parts are thousands of files: past fileLines, only
	// the files that need a look get a line of their own, and each source a
	// line of totals (every file's counts are in ingest_files and the
	// report's Ingest sheet; -v lists them all).
	const fileLines = 20
	each := all || len(res.Files) <= fileLines
	already := 0
	type total struct {
		files                                         int
		read, loaded, rejected, duplicates, conflicts int64
	}
	var order []string
	totals := map[string]*total{}
	for _, f := range res.Files {
		if f.AlreadyLoaded {
			already++
		}
		notable := f.AlreadyLoaded || f.NameReused || f.Damage != "" || f.Rejected > 0 || f.Conflicts > 0
		if each || notable {
			printFile(w, f)
		}
		key := f.Source
		if f.Role != "" && f.Role != "canonical" {
			key = fmt.Sprintf("%s (%s %s)", f.Source, f.Preset, f.Role)
		}
		if totals[key] == nil {
			totals[key] = &total{}
			order = append(order, key)
		}
		t := totals[key]
		t.files++
		t.read, t.loaded, t.rejected, t.duplicates, t.conflicts = t.read+f.Read, t.loaded+f.Loaded, t.rejected+f.Rejected, t.duplicates+f.Duplicates, t.conflicts+f.Conflicts
	}
	if !each {
		for _, key := range order {
			t := totals[key]
			fmt.Fprintf(w, "%s: %d files, read %d, loaded %d, rejected %d, duplicates %d, conflicts %d\n",
				key, t.files, t.read, t.loaded, t.rejected, t.duplicates, t.conflicts)
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

// printFile prints one file's outcome.
func printFile(w io.Writer, f ingest.FileResult) {
	if f.AlreadyLoaded {
		damage := ""
		if f.Damage != "" {
			damage = " [" + f.Damage + " when loaded: the rest of the file is missing]"
		}
		fmt.Fprintf(w, "%s: already loaded (sha256 %s), nothing added%s\n", f.Path, f.SHA256[:12], damage)
		return
	}
	flag := ""
	if f.NameReused {
		flag = " [name loaded before with other content]"
	}
	if f.Damage != "" {
		flag += " [" + f.Damage + ": the rows after the break are missing]"
	}
	kind := ""
	if f.Role != "" && f.Role != "canonical" {
		kind = fmt.Sprintf(" (%s %s, %s)", f.Preset, f.Role, f.Source)
	}
	fmt.Fprintf(w, "%s: %s/%s%s, read %d, loaded %d, rejected %d, duplicates %d, conflicts %d%s\n",
		f.Path, f.Format, f.Compression, kind, f.Read, f.Loaded, f.Rejected, f.Duplicates, f.Conflicts, flag)
}

// chooseSources picks what to load: LOG arguments (one source, "cli", with
// the flags' layout and keys), else the incident file's sources. LOG
// arguments replace the sources; with say, the command says so on stderr.
func chooseSources(g *globalOptions, inc *incident.Incident, logs []string, o ingest.Options, say bool) ([]ingest.Source, error) {
	if len(logs) > 0 {
		if o.MappingFile != "" && o.Preset != "" && o.Preset != "canonical" {
			return nil, errs.Usage("--preset and --mapping are exclusive")
		}
		if say && inc != nil && len(inc.Sources) > 0 {
			fmt.Fprintf(g.stderr, "leakmap: LOG arguments given: the incident file's %d sources are not loaded\n", len(inc.Sources))
		}
		return []ingest.Source{{Paths: logs, Layout: o.Preset, Mapping: o.MappingFile, Keys: ingest.SourceKeys{
			Role: o.Role, Model: o.Model, Timezone: o.Timezone, TenantField: o.TenantField, Tenant: o.Tenant, Label: "cli"}}}, nil
	}
	if inc == nil {
		return nil, errs.Usage("no log files given: give LOG... or --incident FILE with sources:")
	}
	if len(inc.Sources) == 0 {
		return nil, errs.Usage("no log files given, and %s lists no sources: give LOG... or add sources: to the incident file", inc.Path)
	}
	for name, v := range map[string]string{"--preset": o.Preset, "--mapping": o.MappingFile, "--role": o.Role, "--model": o.Model,
		"--timezone": o.Timezone, "--tenant-field": o.TenantField, "--tenant": o.Tenant} {
		if v != "" {
			return nil, errs.Usage("%s applies to LOG arguments; the incident file's sources give their own keys", name)
		}
	}
	out := make([]ingest.Source, len(inc.Sources))
	for i, s := range inc.Sources {
		out[i] = ingest.Source{Paths: s.Paths, Layout: s.Layout, Mapping: s.Mapping, Keys: ingest.SourceKeys{
			Role: s.Role, Model: s.Model, Timezone: s.Timezone, TenantField: s.TenantField, Tenant: s.Tenant, Label: s.Label}}
	}
	return out, nil
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
