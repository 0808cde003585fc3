// Package preflight reads serving engines' own start-up lines (SGLang's
// server_args, KV Cache and max_total_num_tokens lines; vLLM's GPU KV cache
// size and Maximum concurrency lines) and turns them into a capacity
// timeline (the incident file's capacity.timeline format) and the check the
// seed's incident asks every operator to run: is a host's KV pool smaller
// than the longest context it accepts? It reads text logs only, prints
// nothing, and never guesses a value a line does not state: a start-up line
// it cannot read is a Problem naming file and line.
package preflight

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/ingest"
)

// Options say how to read the logs.
type Options struct {
	// Location is the zone of times written without one (both engines write
	// local time with no offset); nil is UTC.
	Location *time.Location
	// Instance names the host of every file, instead of the file names.
	Instance string
	// Year is the year of times written without one (vLLM's "MM-DD"); 0
	// when not given, and such a time is then a usage error.
	Year int
	// MaxLineBytes bounds one line (default 64 MiB); the rest of a longer
	// line is skipped, its start still read.
	MaxLineBytes int
}

// Roles.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
	RoleBoth    = "both"    // SGLang disaggregation_mode null, vLLM without kv_transfer_config
	RoleUnknown = "unknown" // never stated
)

// FindingPoolBelowContext is the one finding: the KV pool holds fewer
// tokens than the longest context the server accepts.
const FindingPoolBelowContext = "pool_below_context"

// Start is one start of one server, from its pool line until the next start
// of the same host.
type Start struct {
	Instance string
	Role     string // RolePrefill, RoleDecode, RoleBoth or RoleUnknown
	Model    string // model_path, when stated
	Engine   string // "sglang" or "vllm"
	Pool     int64  // KV pool in tokens
	Context  int64  // the longest context accepted; 0 when not stated
	From     time.Time
	Until    time.Time // zero: still running at the end of the logs
	Cut      int64     // inputs refused as too long in [From, Until)
	File     string    // where the pool line is
	Line     int64
}

// Finding says whether the start is the seed's misconfiguration.
func (s Start) Finding() bool { return s.Context > 0 && s.Pool < s.Context }

// Row is one row of capacity.csv or findings.csv.
type Row struct {
	Start
	Role string // prefill or decode (unknown in findings only)
}

// Problem is a start-up line that could not be read.
type Problem struct {
	File   string
	Line   int64
	Reason string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Reason) }

// Result is what the logs say.
type Result struct {
	Starts   []Start // sorted by instance, From
	Timeline []Row   // capacity.csv: starts with a stated role; a server doing both gives two rows
	Findings []Row   // findings.csv: every row (unknown roles included) whose pool is below its context
	// UnknownRole lists the hosts with a start whose role is never stated
	// (no server_args / non-default args line before its pool line).
	UnknownRole []string
	// Unchecked are the starts whose context is not stated: the check
	// cannot be made for them.
	Unchecked []Start
	Problems  []Problem
	Files     int
	Lines     int64
	// CutsOutside counts refused inputs logged outside every start's period
	// (before a host's first start, or after a restart whose pool is unknown).
	CutsOutside int64
}

// Read reads every file of paths (files, folders, globs; plain, gzip or
// zstd). Errors: errs.Usage for a file whose host cannot be told from its
// name without Options.Instance, or a year-less time without Options.Year;
// errs.Input for a file that cannot be read. Unreadable start-up lines are
// not errors: they are in Result.Problems.
func Read(ctx context.Context, logger *slog.Logger, paths []string, opts Options) (*Result, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = 64 << 20
	}
	files, _, err := ingest.ExpandPaths(paths, logger)
	if err != nil {
		return nil, err
	}
	res := &Result{Files: len(files)}
	byHost := map[string][]event{}
	for i, f := range files {
		host := opts.Instance
		if host == "" {
			if host = HostFromName(filepath.Base(f)); host == "" {
				return nil, errs.Usage("%s: the host is not in the file name (HOST.log, HOST_RANK.log, HOST.log.1.gz, ...); give --instance", f)
			}
		}
		evs, lines, probs, err := readFile(ctx, f, i, opts)
		if err != nil {
			return nil, err
		}
		logger.Debug("read", "file", f, "host", host, "lines", lines, "events", len(evs), "problems", len(probs))
		res.Lines += lines
		res.Problems = append(res.Problems, probs...)
		byHost[host] = append(byHost[host], evs...)
	}
	hosts := make([]string, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	for _, h := range hosts {
		starts, probs, outside := assemble(h, byHost[h])
		res.Starts = append(res.Starts, starts...)
		res.Problems = append(res.Problems, probs...)
		res.CutsOutside += outside
	}
	res.finish()
	return res, nil
}

var hostName = regexp.MustCompile(`^(.+?)(?:_\d+)?\.log`)

// HostFromName is the host in a log file's name: what comes before
// "_<digits>.log" or before the first ".log" ("glm-p0_0.log.2026-09-02_08.gz"
// and "glm-p0.log.1.gz" are glm-p0); "" when the name has no ".log".
func HostFromName(name string) string {
	if m := hostName.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

func readFile(ctx context.Context, path string, index int, opts Options) ([]event, int64, []Problem, error) {
	rc, err := ingest.OpenDecompressed(path)
	if err != nil {
		return nil, 0, nil, errs.Input("%s: %w", path, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<20)
	lr := &lineReader{loc: opts.Location, year: opts.Year}
	var evs []event
	var probs []Problem
	var n int64
	var long []byte
	for {
		raw, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line (a request printed whole): keep its first
			// MaxLineBytes, enough for any start-up line.
			long = append(long[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) {
				raw, err = br.ReadSlice('\n')
				if room := opts.MaxLineBytes - len(long); room > 0 {
					long = append(long, raw[:min(len(raw), room)]...)
				}
			}
			raw = long
		}
		if len(raw) > 0 {
			n++
			if n%65536 == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return nil, 0, nil, cerr
				}
			}
			ev, ok, perr := lr.parse(raw)
			if perr != nil {
				var ny errNoYear
				if errors.As(perr, &ny) {
					return nil, 0, nil, errs.Usage("%s:%d: %v", path, n, perr)
				}
				probs = append(probs, Problem{File: path, Line: n, Reason: perr.Error()})
			} else if ok {
				ev.file, ev.line, ev.fileIndex = path, n, index
				evs = append(evs, ev)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, nil, errs.Input("%s: after line %d: %w", path, n, err)
		}
	}
	return evs, n, probs, nil
}

// assemble turns one host's events into starts. A start opens at a
// server_args (or vLLM non-default args) line and takes its pool from the
// max_total_num_tokens line (else the KV Cache line) or vLLM's GPU KV cache
// size line; a pool line with no new args line before it is a start whose
// role is not stated.
func assemble(host string, evs []event) ([]Start, []Problem, int64) {
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		if a.fileIndex != b.fileIndex {
			return a.fileIndex - b.fileIndex
		}
		return int(a.line - b.line)
	})
	var starts []Start
	var probs []Problem
	var cuts []event
	seen := map[string]bool{}
	type open struct {
		args, kv, pool *event
		conc           *event
	}
	var cur *open
	var restarts []time.Time // args lines of starts that never logged a pool
	flush := func() {
		if cur == nil {
			return
		}
		p := cur.pool
		if p == nil {
			p = cur.kv
		}
		if p == nil {
			// Started, but no pool line can be read (a crash at start, or an
			// engine that does not log it): the previous start ended here.
			if cur.args != nil {
				restarts = append(restarts, cur.args.at)
			}
			cur = nil
			return
		}
		s := Start{Instance: host, Role: RoleUnknown, Engine: "sglang", Pool: p.tokens, Context: p.context,
			From: p.at, File: p.file, Line: p.line}
		if p.kind == evVPool {
			s.Engine = "vllm"
			if cur.conc != nil && s.Context == 0 {
				s.Context = cur.conc.context
			}
		}
		if a := cur.args; a != nil {
			if a.role != "" {
				s.Role = a.role
			}
			s.Model = a.model
			if s.Context == 0 {
				s.Context = a.context
			}
		}
		starts = append(starts, s)
		cur = nil
	}
	for i := range evs {
		e := &evs[i]
		if e.kind == evCut {
			cuts = append(cuts, *e)
			continue
		}
		if seen[e.key] {
			continue // the same line shipped twice, or written to two files
		}
		seen[e.key] = true
		switch e.kind {
		case evArgs, evVArgs:
			flush()
			cur = &open{args: e}
		case evKV:
			if cur == nil || cur.pool != nil {
				flush()
				cur = &open{}
			}
			if cur.kv == nil {
				cur.kv = e
			}
		case evPool, evVPool:
			if cur == nil || cur.pool != nil {
				flush()
				cur = &open{}
			}
			cur.pool = e
		case evVConc:
			if cur == nil || cur.pool == nil || cur.pool.kind != evVPool || cur.conc != nil {
				probs = append(probs, Problem{File: e.file, Line: e.line,
					Reason: "Maximum concurrency line with no GPU KV cache size line before it in the same start: the pool is not stated (vLLM's V0 engine logs GPU blocks, not tokens)"})
				continue
			}
			cur.conc = e
		}
	}
	flush()
	for i := range starts {
		if i+1 < len(starts) {
			starts[i].Until = starts[i+1].From
		}
		for _, t := range restarts {
			if t.After(starts[i].From) && (starts[i].Until.IsZero() || t.Before(starts[i].Until)) {
				starts[i].Until = t
			}
		}
	}
	// Refused inputs, by period; one request logged twice counts once.
	var outside int64
	counted := map[string]bool{}
	for _, c := range cuts {
		if c.rid != "" {
			if counted[c.rid] {
				continue
			}
			counted[c.rid] = true
		}
		i, found := slices.BinarySearchFunc(starts, c.at, func(s Start, t time.Time) int { return s.From.Compare(t) })
		if !found {
			i--
		} else {
			for i+1 < len(starts) && !starts[i+1].From.After(c.at) {
				i++ // the latest start at that instant
			}
		}
		if i < 0 || (!starts[i].Until.IsZero() && !c.at.Before(starts[i].Until)) {
			outside++
			continue
		}
		starts[i].Cut++
	}
	return starts, probs, outside
}

// finish fills the timeline, the findings and the lists from the starts.
func (r *Result) finish() {
	unknown := map[string]bool{}
	for _, s := range r.Starts {
		roles := []string{s.Role}
		if s.Role == RoleBoth {
			roles = []string{RoleDecode, RolePrefill}
		}
		for _, role := range roles {
			row := Row{Start: s, Role: role}
			if role != RoleUnknown {
				r.Timeline = append(r.Timeline, row)
			}
			if s.Finding() {
				r.Findings = append(r.Findings, row)
			}
		}
		if s.Role == RoleUnknown {
			unknown[s.Instance] = true
		}
		if s.Context == 0 {
			r.Unchecked = append(r.Unchecked, s)
		}
	}
	for h := range unknown {
		r.UnknownRole = append(r.UnknownRole, h)
	}
	slices.Sort(r.UnknownRole)
	byRow := func(a, b Row) int {
		return cmpRows(a, b)
	}
	slices.SortStableFunc(r.Timeline, byRow)
	slices.SortStableFunc(r.Findings, byRow)
}

func cmpRows(a, b Row) int {
	if c := strings.Compare(a.Instance, b.Instance); c != 0 {
		return c
	}
	if c := strings.Compare(a.Role, b.Role); c != 0 {
		return c
	}
	return a.From.Compare(b.From)
}
