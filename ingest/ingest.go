// Package ingest loads request logs into a case database: the requests
// table, the chain of custody (ingest_files) and the rows it could not load
// (rejected_rows), losing nothing: every record read is loaded, rejected
// with its file, line, reason and raw text, or counted as a duplicate, so
// read = loaded + rejected + duplicates per file and in total.
//
// A canonical JSON Lines file (plain, gzip or zstd) goes through DuckDB's own
// reader straight into requests (the fast path); the few lines that reader
// cannot judge exactly as Go would (truncated, not JSON, odd values) are read
// again and judged by the checked path's parser, so both paths give the same
// rows, lines and rejects. Any other file (CSV, Parquet, another layout), or
// one whose rows cannot be matched to lines, is read record by record in Go
// (the checked path). A file is part of the case once the transaction that records it in
// ingest_files commits, with all its rows, or not at all: the checked path
// uses one transaction; the fast path commits its rows first and records
// them in a second (see loader.fast), and rows of a file that never got its
// ingest_files row (still in ingest_pending) are deleted, at once or by
// casedb.Open after a crash.
//
// Where a row came from: requests.line is the 1-based line of a JSON Lines
// file (blank lines count, and are not rows), the physical line on which a
// CSV record starts (the header is line 1), or the 1-based row number of a
// Parquet file; row_id = file_id << 32 | line, unique across the case.
//
// A duplicate is a row equal, value for value (times as UTC instants), to a
// row already in the case or earlier in the same file: it is counted, not
// stored twice; a 64-bit hash only narrows the search. Two rows with one
// request_id and other values are both kept: a conflict, listed by
// queries/ingest_conflicts.sql and counted in FileResult.Conflicts.
//
// Layouts other than the canonical one are read through a Mapping: the
// presets "engine" and "gateway" (see enginePreset, gatewayPreset) or a
// user's YAML mapping file (see Mapping).
//
// Records of real layouts (a gateway's, an engine's prefill and decode
// logs) are kept as they are in source_records; Join (join.go), run at the
// end of every ingest of a case that holds any, rebuilds from all of them
// the joined part of requests: one request per call, with join_report
// saying what matched, what did not, and why.
package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/ingest/layouts"
	"github.com/leakmap/leakmap/queries"
	"github.com/schollz/progressbar/v3"
)

// Options choose how files are read.
type Options struct {
	Format      string    // "auto" (default: from content, not the extension), "jsonl", "csv", "parquet"
	Preset      string    // a named layout (package layouts; "engine" and "gateway" are aliases); "" canonical
	MappingFile string    // YAML mapping file (docs/layouts.md); exclusive with Preset
	Progress    io.Writer // where to draw a progress bar (pass stderr only when it is a terminal); nil: none
	// Model names the model of rows whose log carries none (engine logs
	// usually do not); a mapped model field wins.
	Model string
	// Join holds the tolerances of the join that ends every ingest whose
	// case holds source records (real-layout logs).
	Join JoinOptions
	// The other source keys (DESIGN.md "Real logs"), as flags give them.
	Role, Timezone, TenantField, Tenant string
	// MaxLineBytes bounds a line (a CSV record) in memory; a longer one is
	// rejected with its file and line. 0: DefaultMaxLineBytes.
	MaxLineBytes int
}

// Source is one source of a case: its files and how to read them.
type Source struct {
	Paths   []string // files, folders, globs
	Layout  string   // a named layout; "" canonical
	Mapping string   // a mapping file, instead of Layout
	Keys    SourceKeys
}

// FileResult is what happened to one input file.
type FileResult struct {
	Path, SHA256, Format, Compression, Preset string
	Source, Role                              string // the source's label (sources[i], cli) and role
	Size                                      int64
	// Read = Loaded + Rejected + Duplicates. Conflicts counts loaded rows
	// whose request_id another row of the case has (see ingest_conflicts.sql).
	Read, Loaded, Rejected, Duplicates, Conflicts int64
	AlreadyLoaded                                 bool // same SHA-256 already in the case: skipped whole, adds nothing
	NameReused                                    bool // same file name loaded before with another hash: loaded and flagged
	// Damage says the compressed stream broke ("truncated gzip stream"):
	// the rows before the break are loaded, the line it cut is rejected
	// with this reason, and Run ends with an ErrDamaged error naming it.
	Damage string
}

// ErrDamaged is wrapped (with errs.ErrInput, exit 3) by the error Run ends
// with when a file's compressed stream broke: the case lacks the file's
// rest. 'leakmap run' stops there unless --keep-going.
var ErrDamaged = errors.New("damaged input")

// Result is every file's outcome and the totals.
type Result struct {
	Files                                         []FileResult
	Read, Loaded, Rejected, Duplicates, Conflicts int64 // totals
	// Skipped lists what a folder held that is not a file to load (a
	// dangling symbolic link, a socket): said, never dropped in silence.
	Skipped []Skipped
	// Join is the join of the case's source records into requests; nil
	// when the case has none.
	Join *JoinResult
}

// Skipped is an entry of a folder that was not loaded, and why.
type Skipped struct{ Path, Reason string }

func (r *Result) add(fr FileResult) {
	r.Files = append(r.Files, fr)
	r.Read += fr.Read
	r.Loaded += fr.Loaded
	r.Rejected += fr.Rejected
	r.Duplicates += fr.Duplicates
	r.Conflicts += fr.Conflicts
}

// Run loads LOG arguments: one source labelled "cli" (see RunSources).
func Run(ctx context.Context, db *sql.DB, logger *slog.Logger, paths []string, opts Options) (*Result, error) {
	src := Source{Paths: paths, Layout: opts.Preset, Mapping: opts.MappingFile, Keys: SourceKeys{
		Role: opts.Role, Model: opts.Model, Timezone: opts.Timezone, TenantField: opts.TenantField,
		Tenant: opts.Tenant, Label: "cli"}}
	if opts.MappingFile != "" && opts.Preset != "" && opts.Preset != "canonical" {
		return nil, errs.Usage("--preset and --mapping are exclusive")
	}
	if len(paths) == 0 {
		return nil, errs.Usage("no log files given")
	}
	return RunSources(ctx, db, logger, []Source{src}, opts)
}

// RunSources expands each source's files, folders and globs, and loads
// each file: canonical logs into requests, one transaction per file; every
// other layout's records into source_records, small files many to a
// transaction (a fleet's hourly parts are thousands of files). Every file
// is checked before any is loaded: a file that is not a log at all
// (binary, a text log, CSV without the required columns, records that all
// lack a required field) stops the run with an errs.Input naming the file
// and what is missing, and the database is left as it was. Files whose
// SHA-256 is already in the case are skipped, so rerunning after a crash or
// Ctrl-C finishes the job. On error, the returned Result holds the files
// committed so far. opts gives Format and Progress.
func RunSources(ctx context.Context, db *sql.DB, logger *slog.Logger, sources []Source, opts Options) (*Result, error) {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch opts.Format {
	case "":
		opts.Format = "auto"
	case "auto", formatJSONL, formatCSV, formatParquet:
	default:
		return nil, errs.Usage("--format %q: want auto, jsonl, csv or parquet", opts.Format)
	}
	type planned struct {
		fi *fileInfo
		m  *Mapping
	}
	var plan []planned
	var paths []string
	var total int64
	var skipped []Skipped
	seen := map[string]bool{}
	for _, src := range sources {
		m, err := resolveMapping(src)
		if err != nil {
			return nil, err
		}
		files, sk, err := expand(src.Paths, logger)
		if err != nil {
			return nil, err
		}
		skipped = append(skipped, sk...)
		for _, p := range files {
			if seen[p] {
				continue // a file two sources name is read once, by the first
			}
			seen[p] = true
			plan = append(plan, planned{m: m})
			paths = append(paths, p)
		}
	}
	// Hashing and checking a file is independent of the others: a fleet's
	// thousands of small parts are checked on every CPU. The first bad file
	// in order is the one reported, whatever finished first.
	checks := make([]error, len(plan))
	parallelEach(ctx, len(plan), func(i int) {
		fi, err := checkFields(ctx, db, paths[i], plan[i].m, opts.Format)
		if err != nil {
			checks[i] = err
			return
		}
		// The head was for the checks: kept for every file of a fleet it
		// was 256 KiB a file (1.4 GB for 5,607 files).
		fi.head = nil
		fi.maxLine = opts.MaxLineBytes
		plan[i].fi = fi
	})
	for i, err := range checks {
		if err != nil {
			return nil, err
		}
		total += plan[i].fi.size
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prog := newProgress(opts.Progress, total)
	defer prog.finish()
	res := &Result{Skipped: skipped}
	cs := &caseSession{db: db}
	defer cs.close()
	var batch []recordFile
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		cs.close() // the batch takes its own connection (a pool may have one)
		frs, err := loadRecordFiles(ctx, db, logger, batch, prog)
		batch = batch[:0]
		for _, fr := range frs {
			res.add(fr)
		}
		return err
	}
	for _, p := range plan {
		if p.m.toRecords {
			batch = append(batch, recordFile{fi: p.fi, m: p.m})
			if len(batch) >= maxBatchFiles || batchBytes(batch) >= maxBatchBytes {
				if err := flush(); err != nil {
					return res, err
				}
			}
			continue
		}
		if err := flush(); err != nil {
			return res, err
		}
		fr, err := loadOne(ctx, cs, logger, p.fi, p.m, prog)
		if err != nil {
			return res, err
		}
		res.add(fr)
		logger.Debug("ingested", "file", fr.Path, "read", fr.Read, "loaded", fr.Loaded,
			"rejected", fr.Rejected, "duplicates", fr.Duplicates, "already_loaded", fr.AlreadyLoaded)
	}
	if err := flush(); err != nil {
		return res, err
	}
	cs.close()
	if res.Read != res.Loaded+res.Rejected+res.Duplicates {
		return res, fmt.Errorf("ingest: totals do not reconcile: read %d, loaded %d, rejected %d, duplicates %d",
			res.Read, res.Loaded, res.Rejected, res.Duplicates)
	}
	damaged, err := damagedFiles(ctx, db, res)
	if err != nil {
		return res, err
	}
	// Real-layout records become requests only through the join, over every
	// record of the case (a later file can complete an earlier call).
	has, err := hasSourceRecords(ctx, db)
	if err != nil || !has {
		return res, errors.Join(err, damaged)
	}
	if res.Join, err = Join(ctx, db, logger, opts.Join); err != nil {
		return res, err
	}
	return res, damaged
}

// damagedFiles is the ErrDamaged error naming every file whose compressed
// stream broke, in this run or when it was loaded (a rerun skips the file
// as already loaded, but its case still lacks the rest), or nil.
func damagedFiles(ctx context.Context, db *sql.DB, res *Result) (damaged, err error) {
	var names []string
	for i := range res.Files {
		f := &res.Files[i]
		if f.AlreadyLoaded {
			err := db.QueryRowContext(ctx, queries.Get("ingest_file_damage"), f.SHA256).Scan(&f.Damage)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("ingest_file_damage: %w", err)
			}
		}
		if f.Damage != "" {
			names = append(names, f.Path+" ("+f.Damage+")")
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return errs.Input("%w: %s: the rows before the break are loaded, the rest of the file is missing from the case; "+
		"get an intact copy, or go on knowingly (leakmap run --keep-going)", ErrDamaged, strings.Join(names, ", ")), nil
}

// resolveMapping compiles a source's layout or mapping file with its keys.
func resolveMapping(src Source) (*Mapping, error) {
	where := src.Keys.Label
	if where == "" || where == "cli" {
		where = "--preset " + layouts.Canonical(src.Layout)
		if src.Mapping != "" {
			where = "--mapping " + src.Mapping
		}
	}
	var f *layouts.File
	var err error
	if src.Mapping != "" {
		if src.Layout != "" && src.Layout != "canonical" {
			return nil, errs.Usage("%s: layout and mapping are exclusive", where)
		}
		f, err = layouts.Load(src.Mapping)
	} else {
		f, err = layouts.Get(src.Layout)
	}
	if err != nil {
		return nil, errs.Usage("%w", err)
	}
	m, err := compileMapping(f, src.Keys)
	if err != nil {
		return nil, errs.Usage("%s: %w", where, err)
	}
	return m, nil
}

// caseSession is the connection an ingest command loads its canonical files
// on, one after the other, and what it keeps between them: its TEMP table
// ingest_case_ids, the request_id hashes of the case's rows, built once and
// kept equal to requests in the transactions that record each file, so a
// file's duplicate search reads narrow integers, not every row of the case
// (see loader.finish).
type caseSession struct {
	db   *sql.DB
	conn *sql.Conn // nil until a canonical file loads; given back (close) before anything else asks the pool
	// ids: ingest_case_ids holds every committed row of requests. False
	// until built, and again after any file that did not commit (its
	// transaction, with what it did to the table, rolled back).
	ids bool
}

func (cs *caseSession) connect(ctx context.Context) (*sql.Conn, error) {
	if cs.conn == nil {
		conn, err := cs.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		cs.conn = conn
	}
	return cs.conn, nil
}

func (cs *caseSession) close() {
	if cs.conn != nil {
		// The TEMP tables go with the session, not with a pooled connection;
		// the next canonical file, on a new connection, builds the table
		// again (record files between may have changed requests too).
		cs.conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS ingest_case_ids")
		cs.conn.Close()
		cs.conn = nil
	}
	cs.ids = false
}

// loadOne loads one checked file unless the case already holds its bytes,
// on the session's connection (which it takes from the pool, the only one a
// pool of one has: so it asks everything of that connection).
func loadOne(ctx context.Context, cs *caseSession, logger *slog.Logger, fi *fileInfo, m *Mapping, prog *progress) (FileResult, error) {
	fr := FileResult{Path: fi.path, SHA256: fi.sha256, Format: fi.format, Compression: fi.compression,
		Preset: m.name, Size: fi.size, Source: m.label, Role: m.role}
	conn, err := cs.connect(ctx)
	if err != nil {
		return fr, err
	}
	var id int64
	var prev string
	err = conn.QueryRowContext(ctx, queries.Get("ingest_find_sha"), fi.sha256).Scan(&id, &prev)
	switch {
	case err == nil:
		fr.AlreadyLoaded = true
		prog.add(fi.size)
		logger.Debug("already loaded", "file", fi.path, "as", prev)
		return fr, nil
	case err != sql.ErrNoRows:
		return fr, err
	}
	if err := conn.QueryRowContext(ctx, queries.Get("ingest_name_reused"), fi.name, fi.sha256).Scan(&fr.NameReused); err != nil {
		return fr, err
	}
	l := &loader{conn: conn, cs: cs, logger: logger, fi: fi, m: m, prog: prog, res: fr}
	if err := l.load(ctx); err != nil {
		return fr, err
	}
	l.res.Damage = fi.damage
	return l.res, nil
}

// progress draws a bar over the bytes of all files; nil draws nothing. The
// bar is rewound when a file's fast attempt gives way to the checked path,
// which reads the file again.
type progress struct {
	mu          sync.Mutex
	bar         *progressbar.ProgressBar
	done, total int64
}

func newProgress(w io.Writer, total int64) *progress {
	if w == nil {
		return nil
	}
	return &progress{total: total, bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("ingest"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())}
}

func (p *progress) add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.bar.Set64(min(p.done, p.total))
}

// mark returns the bar's position, for rewind.
func (p *progress) mark() int64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

func (p *progress) rewind(to int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = to
	p.bar.Set64(min(p.done, p.total))
}

func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return &countingReader{r: r, p: p}
}

func (p *progress) finish() {
	if p != nil {
		p.bar.Finish()
	}
}

type countingReader struct {
	r io.Reader
	p *progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.add(int64(n))
	return n, err
}
