package main

import (
	"github.com/leakmap/leakmap/ingest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag groups shared by the commands that share them, so that a flag has
// one name, one default and one wording everywhere.

// addIngestFlags: how LOG... is read (ingest and run).
func addIngestFlags(f *pflag.FlagSet, o *ingest.Options) {
	f.StringVar(&o.Format, "format", "auto", "log format: auto (from content), jsonl, csv or parquet")
	f.StringVar(&o.Preset, "preset", "", "log layout: canonical (default), sglang, litellm-spendlogs, litellm-payload, cloudflare-aigw, otlp-genai (engine, gateway: old names of sglang, cloudflare-aigw)")
	f.StringVar(&o.MappingFile, "mapping", "", "YAML mapping file (docs/layouts.md): your own fields, or a named layout overridden (extends: LAYOUT)")
	f.StringVar(&o.Role, "role", "", "the logs' role: gateway, prefill, decode or engine (default: the layout's; required for sglang and otlp-genai)")
	f.StringVar(&o.Model, "model", "", "model of records whose log carries none (engine logs)")
	f.StringVar(&o.Timezone, "timezone", "", "zone of times written without an offset, e.g. Europe/Paris (default UTC)")
	f.StringVar(&o.TenantField, "tenant-field", "", "path of the tenant in the records, e.g. custom_labels.tenant or metadata.account")
	f.StringVar(&o.Tenant, "tenant", "", "tenant of every record that carries none (a per-account export)")
	f.IntVar(&o.MaxLineBytes, "max-line-bytes", ingest.DefaultMaxLineBytes, "longest log line (or CSV record) read into memory; a longer one is rejected with its file and line")
	// Zero leaves the tolerances to the incident file's join: block, else the defaults.
	f.DurationVar(&o.Join.RoomTolerance, "room-tolerance", 0,
		"join: how far apart the prefill and decode records of one bootstrap_room may start (default: the incident's join.room_tolerance, else 30s)")
	f.DurationVar(&o.Join.GatewayTolerance, "gateway-tolerance", 0,
		"join: how far apart a gateway and an engine record sharing no id may start (default: the incident's join.gateway_tolerance, else 2s)")
}

// markIngestFlags adds the rules between the ingest flags.
func markIngestFlags(cmd *cobra.Command) {
	cmd.MarkFlagsMutuallyExclusive("preset", "mapping")
}

// addAsOfFlag: the date notices and reports bear (run, report, notify draft).
func addAsOfFlag(f *pflag.FlagSet, dst *string) {
	f.StringVar(dst, "as-of", "", "date the notices and reports bear, and the time the 72-hour deadline is judged at, RFC 3339 (default: the incident file's as_of, else now)")
}

// required marks flags cobra must see before the command runs; a missing
// one is a usage error (exit 2) naming it.
func required(cmd *cobra.Command, names ...string) {
	for _, name := range names {
		if err := cmd.MarkFlagRequired(name); err != nil {
			panic(err) // a programming error: the flag is not defined
		}
	}
}
