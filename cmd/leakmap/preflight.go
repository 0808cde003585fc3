package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/preflight"
	"github.com/spf13/cobra"
)

type preflightOptions struct {
	out      string
	timezone string
	instance string
	year     int
}

// lookedFor is what a log without any start-up line is told was searched.
const lookedFor = `SGLang's "server_args=ServerArgs(", "KV Cache is allocated. #tokens: N" and ` +
	`"max_total_num_tokens=N, ..., context_len=L" lines, and vLLM's "GPU KV cache size: N tokens" and ` +
	`"Maximum concurrency for L tokens per request" lines`

func newPreflightCmd(g *globalOptions) *cobra.Command {
	var opts preflightOptions
	cmd := &cobra.Command{
		Use:   "preflight [--out DIR] [--timezone Z] [--instance NAME] [--year Y] LOG...",
		Short: "Read the engines' start-up lines: capacity timeline, and pools smaller than their context",
		Long: `Read serving engines' text logs (files, folders, globs; plain, gzip or zstd):
SGLang's server_args line (disaggregation_mode: prefill, decode, or null for a
server doing both), its "KV Cache is allocated" and "max_total_num_tokens=...,
context_len=..." lines, and vLLM's "GPU KV cache size" and "Maximum concurrency
for L tokens per request" lines. Only rank 0's lines count (other tensor,
pipeline and data-parallel ranks repeat them). The host is the file's name
before "_<digits>.log" or before its first ".log" (--instance overrides); each
start of a server is a row from the time of its pool line.

Writes DIR/capacity.csv (instance,role,pool_tokens,valid_from: the incident
file's capacity.timeline format) and DIR/findings.csv (every host and period
whose KV pool is smaller than the context it accepts, the seed's
misconfiguration, with the inputs it refused as too long in that period), and
prints one line per start. A host whose role is never stated is left out of
capacity.csv and written "unknown" in findings.csv. A start-up line that cannot
be read is reported with file and line, never guessed.

Run it in a deploy pipeline on a new host's log, after the server is up: exit
status 5 stops the launch.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPreflight(cmd, g, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.out, "out", ".", "folder for capacity.csv and findings.csv")
	f.StringVar(&opts.timezone, "timezone", "UTC", "zone of the logs' times, which carry none (IANA name such as Europe/Paris, or an offset such as +02:00)")
	f.StringVar(&opts.instance, "instance", "", "host name of every LOG (default: from each file's name)")
	f.IntVar(&opts.year, "year", 0, "year of times written without one (vLLM's MM-DD HH:MM:SS)")
	return cmd
}

func runPreflight(cmd *cobra.Command, g *globalOptions, opts preflightOptions, logs []string) error {
	loc, err := parseZone(opts.timezone)
	if err != nil {
		return errs.Usage("--timezone: %w", err)
	}
	if opts.year != 0 && (opts.year < 1970 || opts.year > 9999) {
		return errs.Usage("--year: %d is not a year", opts.year)
	}
	res, err := preflight.Read(cmd.Context(), g.logger, logs, preflight.Options{Location: loc, Instance: opts.instance, Year: opts.year})
	if err != nil {
		return err
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stderr, "leakmap: preflight: %s\n", p)
	}
	if len(res.Starts) == 0 {
		return errors.Join(problemsError(res), errs.Input("no start-up line found in %d file(s), %d line(s); looked for %s", res.Files, res.Lines, lookedFor))
	}
	for _, h := range res.UnknownRole {
		fmt.Fprintf(g.stderr, "leakmap: preflight: %s: role never stated (no server_args line with disaggregation_mode, or vLLM non-default args line, before its pool line): left out of capacity.csv, \"unknown\" in findings.csv\n", h)
	}
	for _, s := range res.Unchecked {
		fmt.Fprintf(g.stderr, "leakmap: preflight: %s:%d: %s started %s with a pool of %d tokens but states no context length: not checked\n",
			s.File, s.Line, s.Instance, incident.FormatTime(s.From), s.Pool)
	}
	if res.CutsOutside > 0 {
		fmt.Fprintf(g.stderr, "leakmap: preflight: %d refused input(s) logged outside any start whose pool is known: not counted\n", res.CutsOutside)
	}
	capPath, findPath, err := res.WriteFiles(opts.out)
	if err != nil {
		return err
	}
	if err := res.WriteTable(g.stdout); err != nil {
		return err
	}
	hosts := map[string]bool{}
	for _, r := range res.Timeline {
		hosts[r.Instance] = true
	}
	fmt.Fprintf(g.stdout, "\ncapacity timeline: %d row(s) for %d host(s) -> %s\n", len(res.Timeline), len(hosts), capPath)
	fmt.Fprintf(g.stdout, "findings: %d (pool below context) -> %s\n", len(res.Findings), findPath)
	var probs error
	if len(res.Problems) > 0 || len(res.Unchecked) > 0 {
		probs = problemsError(res)
	}
	if len(res.Findings) > 0 {
		var worst []string
		for _, r := range res.Findings {
			worst = append(worst, fmt.Sprintf("%s (%s) pool %d < context %d from %s", r.Instance, r.Role, r.Pool, r.Context, incident.FormatTime(r.From)))
		}
		return errors.Join(errs.Finding("%d finding(s), the KV pool below the context the server accepts: %s", len(res.Findings), strings.Join(firstN(worst, 3), "; ")), probs)
	}
	return probs
}

// replaceTimeline makes path (when given) the incident's capacity timeline,
// as if its capacity.timeline named it.
func replaceTimeline(inc *incident.Incident, path string) error {
	if path == "" {
		return nil
	}
	tl, err := incident.LoadTimeline(path)
	if err != nil {
		return errs.Usage("--timeline: %w", err)
	}
	inc.Capacity.Timeline, inc.Capacity.TimelinePath = tl, path
	return nil
}

// demoPreflight runs preflight on the simulated engines' text logs into dir,
// prints what it found, and returns the recovered capacity.csv.
func demoPreflight(ctx context.Context, g *globalOptions, logs, dir string) (string, error) {
	res, err := preflight.Read(ctx, g.logger, []string{logs}, preflight.Options{})
	if err != nil {
		return "", fmt.Errorf("preflight: %w", err)
	}
	if err := problemsError(res); err != nil {
		return "", err
	}
	capPath, findPath, err := res.WriteFiles(dir)
	if err != nil {
		return "", err
	}
	hosts := map[string]bool{}
	for _, r := range res.Timeline {
		hosts[r.Instance] = true
	}
	fmt.Fprintf(g.stdout, "preflight: the engines' start-up lines give %d capacity rows for %d hosts (%s); %d finding(s) in %s:\n",
		len(res.Timeline), len(hosts), capPath, len(res.Findings), findPath)
	for _, r := range res.Findings {
		until := "still running"
		if !r.Until.IsZero() {
			until = "until " + incident.FormatTime(r.Until)
		}
		fmt.Fprintf(g.stdout, "  %s (%s): pool %s tokens below its context of %s from %s %s, %d input(s) refused\n",
			r.Instance, r.Role, thousandsInt(r.Pool), thousandsInt(r.Context), incident.FormatTime(r.From), until, r.Cut)
	}
	return capPath, nil
}

func thousandsInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// problemsError is the exit-3 error for unreadable start-up lines and
// unchecked starts, or nil.
func problemsError(res *preflight.Result) error {
	var parts []string
	if n := len(res.Problems); n > 0 {
		parts = append(parts, fmt.Sprintf("%d start-up line(s) could not be read (first: %s)", n, res.Problems[0]))
	}
	if n := len(res.Unchecked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d start(s) state no context length and could not be checked", n))
	}
	if len(parts) == 0 {
		return nil
	}
	return errs.Input("preflight: %s", strings.Join(parts, "; "))
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

var zoneOffset = regexp.MustCompile(`^([+-])(\d{2}):?(\d{2})$`)

// parseZone reads an IANA zone name or a fixed offset (+02:00, -0500).
func parseZone(z string) (*time.Location, error) {
	if m := zoneOffset.FindStringSubmatch(z); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3])
		off := h*3600 + mi*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(z, off), nil
	}
	loc, err := time.LoadLocation(z)
	if err != nil {
		return nil, fmt.Errorf("%q is not a zone name or an offset like +02:00: %w", z, err)
	}
	return loc, nil
}
