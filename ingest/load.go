package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/queries"
)

// testHookBeforeCommit lets tests interrupt a load at its last moment.
var testHookBeforeCommit func(path string)

// testForceChecked sends every file through the checked path, so tests can
// compare it with the fast path on the same bytes.
var testForceChecked bool

// testSkipGoReader sends canonical JSON Lines to DuckDB's reader, the Go
// reader's fallback, so tests can check that path too.
var testSkipGoReader bool

// testHookSamples lets tests spoil the line check's samples, as rows out of
// file order would.
var testHookSamples func(map[int64]string)

// testHookAfterRows lets tests crash a fast load between its two
// transactions: an error returned stops the load with no cleanup.
var testHookAfterRows func(path string) error

// testHookBatch sees the rows of each record batch the Go reader hands
// DuckDB, in order.
var testHookBatch func(rows int64)

// testNoCaseIDs makes every file search the whole table for its shared
// request_ids (ingest_1_shared), as before ingest_case_ids, so tests can
// compare the two searches on the same files.
var testNoCaseIDs bool

// testNoIDSearch makes a first file's shared ids come from SQL even when
// the Go reader hashed them, so tests can compare the two.
var testNoIDSearch bool

// testIDSearches counts the files whose shared ids came from the Go
// reader's hashes.
var testIDSearches int

// maxLine keeps row_id = file_id << 32 | line unique.
const maxLine = 1<<32 - 1

// loader loads one file, all or nothing, on its own connection.
type loader struct {
	conn   *sql.Conn
	cs     *caseSession // the command's session on conn
	logger *slog.Logger
	fi     *fileInfo
	m      *Mapping
	prog   *progress
	fileID int64
	res    FileResult
	// ids are the request_id hashes (duckHash) of the file's rows when
	// the Go reader loaded it, for finish; nil otherwise.
	ids *idBuckets
}

func (l *loader) exec(ctx context.Context, query string, args ...any) (int64, error) {
	defer l.timed(query)()
	r, err := l.conn.ExecContext(ctx, queries.Get(query), args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	return r.RowsAffected()
}

// timed logs a step's duration at debug level.
func (l *loader) timed(step string) func() {
	start := time.Now()
	return func() {
		l.logger.Debug("step", "file", l.fi.path, "step", step, "took", time.Since(start).Round(time.Millisecond))
	}
}

func (l *loader) begin(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	return l.conn.QueryRowContext(ctx, queries.Get("ingest_next_file_id")).Scan(&l.fileID)
}

// rollback runs even when ctx is cancelled (Ctrl-C): the file's rows go.
func (l *loader) rollback() {
	if _, err := l.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		l.logger.Debug("rollback", "file", l.fi.path, "err", err)
	}
}

// load loads l.fi: the fast path when it can, else the checked path.
func (l *loader) load(ctx context.Context) error {
	if l.fi.format == formatEmpty {
		if err := l.begin(ctx); err != nil {
			return err
		}
		l.prog.add(l.fi.size)
		if err := l.finish(ctx, 0, 0, 0, 0); err != nil {
			l.rollback()
			return err
		}
		return nil
	}
	if l.fi.format == formatJSONL && l.m.isIdentity() && !testForceChecked {
		mark := l.prog.mark()
		ok := false
		if !testSkipGoReader {
			var err error
			if ok, err = l.arrowFast(ctx); err != nil {
				return err
			}
			if ok {
				return nil
			}
			l.prog.rewind(mark)
		}
		ok, err := l.fast(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		l.prog.rewind(mark)
		l.logger.Debug("the fast reader cannot place every line of the file; checking it line by line", "file", l.fi.path)
	}
	if err := l.begin(ctx); err != nil {
		return err
	}
	if err := l.checked(ctx); err != nil {
		l.rollback()
		return err
	}
	return nil
}

// rowSink appends checked rows to requests and rejected records
// straight to rejected_rows, inside the file's transaction.
type rowSink struct {
	fileID                             int64
	rows, rejects                      *duckdb.Appender
	read, appended, rejected, dupLines int64
}

func (s *rowSink) row(line int64, v values) error {
	if line > maxLine {
		return fmt.Errorf("line %d: more lines than a file may have", line)
	}
	s.read++
	s.appended++
	// row_hash comes after, from DuckDB's hash() as on the fast path.
	return s.rows.AppendRow(s.fileID<<32|line, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
		uint64(0), s.fileID, line)
}

func (s *rowSink) reject(line int64, reason, raw string) error {
	s.read++
	s.rejected++
	return s.rejects.AppendRow(s.fileID, line, reason, raw)
}

func (s *rowSink) duplicateLine() {
	s.read++
	s.dupLines++
}

// checked reads the file record by record in Go, keeping each rejected
// record with its line, reason and raw text.
func (l *loader) checked(ctx context.Context) error {
	inst := l.m.instance(l.fi.name)
	s, err := l.appendRows(ctx, func(s *rowSink, dc driver.Conn) error {
		return l.read(ctx, s, inst, dc)
	})
	if err != nil {
		return err
	}
	return l.finish(ctx, s.read, s.appended, s.rejected, s.dupLines)
}

// appendRows runs fill with a sink whose rows are appended to requests and
// whose rejected records go to rejected_rows, inside the file's open
// transaction; the rows' hashes are set at the end. Appending straight to
// requests keeps memory flat: DuckDB writes a big insert's row groups to
// disk as they fill, where a stage table (temporary, so in memory) held the
// whole file until commit (1.4 GB for a 5M-row CSV).
func (l *loader) appendRows(ctx context.Context, fill func(*rowSink, driver.Conn) error) (*rowSink, error) {
	s := &rowSink{fileID: l.fileID}
	err := l.conn.Raw(func(dc any) error {
		conn, ok := dc.(driver.Conn)
		if !ok {
			return errors.New("ingest: not a DuckDB connection")
		}
		var err error
		if s.rows, err = duckdb.NewAppender(conn, "", "main", "requests"); err != nil {
			return fmt.Errorf("requests appender: %w", err)
		}
		if s.rejects, err = duckdb.NewAppender(conn, "", "main", "rejected_rows"); err != nil {
			s.rows.Close()
			return fmt.Errorf("rejected_rows appender: %w", err)
		}
		ferr := fill(s, conn)
		e1, e2 := s.rows.Close(), s.rejects.Close()
		return errors.Join(ferr, e1, e2)
	})
	if err != nil {
		return nil, err
	}
	hashed, err := l.exec(ctx, "ingest_row_hash", l.fileID)
	if err != nil {
		return nil, err
	}
	if hashed != s.appended {
		return nil, fmt.Errorf("%s: appended %d rows but hashed %d", l.fi.path, s.appended, hashed)
	}
	return s, nil
}

// read runs the source that fits the file's format and layout.
func (l *loader) read(ctx context.Context, s sink, inst fileInstance, dc driver.Conn) error {
	return readFile(ctx, l.fi, l.m, l.prog, inst, dc, s)
}

// readFile reads one file's records into s.
func readFile(ctx context.Context, fi *fileInfo, m *Mapping, prog *progress, inst fileInstance, dc driver.Conn, s sink) error {
	if fi.format == formatParquet {
		err := readParquet(ctx, dc, fi.path, m, inst, s)
		prog.add(fi.size)
		return err
	}
	rc, err := openContentWith(fi.path, fi.compression, prog.reader)
	if err != nil {
		return fmt.Errorf("%s: %w", fi.path, err)
	}
	defer rc.Close()
	end := &endReader{r: rc}
	ts := newTornSink(s, end)
	err = readStream(ctx, end, fi.format, fi.maxLine, m, inst, ts)
	if d := damageOf(rc); d != nil && d.err != nil {
		fi.damage = d.reason()
	}
	if err == nil {
		var damage string
		damage, err = tornOf(ts).finish(fi.damage != "")
		if fi.damage == "" {
			fi.damage = damage
		}
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s: %w", fi.path, err)
	}
	return err
}

// readStream reads a text format's records (JSON Lines, JSON documents,
// CSV) from r into s.
func readStream(ctx context.Context, r io.Reader, format string, max int, m *Mapping, inst fileInstance, s sink) error {
	switch {
	case format == formatCSV:
		return readCSV(ctx, r, max, m, inst, s)
	case m.Layout == layoutEngine:
		return readEngine(ctx, r, max, m, inst, s)
	case m.records != nil:
		return readDocuments(ctx, r, max, m, inst, s)
	default:
		return readJSONL(ctx, r, max, m, inst, s)
	}
}

// finish drops duplicates of rows already in the case, counts conflicts,
// records the file in the chain of custody and commits: the file's rows and
// its ingest_files row land together or not at all.
func (l *loader) finish(ctx context.Context, read, inserted, rejected, dupLines int64) error {
	// The session's ingest_case_ids is built or added to in this
	// transaction: if it does not commit, the table is built again.
	committed := false
	defer func() {
		if !committed {
			l.cs.ids = false
		}
	}()
	// A file that is most of the case is searched with one pass over the
	// table; any other file with a lookup of its own rows' hashes in
	// ingest_case_ids, the case's hashes as narrow integers, filled from
	// requests once per ingest command: hashing every request_id of the case
	// for each file made a command of many files quadratic (17 files of 10M
	// rows in all: 95 s; 51 files of 30M: 539 s).
	var total int64
	if err := l.conn.QueryRowContext(ctx, queries.Get("ingest_count_requests")).Scan(&total); err != nil {
		return err
	}
	for _, q := range []string{"ingest_0_cand", "ingest_0_dups", "ingest_0_shared"} {
		if _, err := l.exec(ctx, q); err != nil {
			return err
		}
	}
	shared, args := "ingest_1_shared_case", []any{l.fileID}
	switch {
	case inserted == total:
		shared, args = "ingest_1_shared_only", nil // the case is this file
	case inserted*2 >= total:
		shared = "ingest_1_shared_whole"
	case testNoCaseIDs:
		shared = "ingest_1_shared"
	}
	ids := l.cs.ids
	if !ids && shared == "ingest_1_shared_case" {
		if _, err := l.exec(ctx, "ingest_0_case_ids"); err != nil {
			return err
		}
		if _, err := l.exec(ctx, "ingest_case_ids_fill", l.fileID); err != nil {
			return err
		}
		ids = true
	}
	if shared == "ingest_1_shared_case" {
		// The one pass over the case: its rows sharing a hash with the file.
		if _, err := l.exec(ctx, "ingest_0_case_hits"); err != nil {
			return err
		}
		if _, err := l.exec(ctx, "ingest_1_case_hits", l.fileID); err != nil {
			return err
		}
	}
	// Most files share no request_id with anything: then the scan that
	// gathers candidate rows (0.35 s for 5M rows) has nothing to find.
	var nShared int64
	var err error
	if shared == "ingest_1_shared_only" && !testNoIDSearch && l.ids != nil && duckHashAgrees(ctx, l.conn) {
		nShared, err = l.sharedFromIDs(ctx)
	} else {
		nShared, err = l.exec(ctx, shared, args...)
	}
	if err != nil {
		return err
	}
	if nShared > 0 {
		if err := l.candidates(ctx, shared == "ingest_1_shared_case"); err != nil {
			return err
		}
	}
	if _, err := l.exec(ctx, "ingest_3_duplicates", l.fileID); err != nil {
		return err
	}
	dups, err := l.exec(ctx, "ingest_drop_duplicates", l.fileID)
	if err != nil {
		return err
	}
	if ids {
		if _, err := l.exec(ctx, "ingest_case_ids_add", l.fileID); err != nil {
			return err
		}
	}
	var conflicts int64
	if err := l.conn.QueryRowContext(ctx, queries.Get("ingest_file_conflicts"), l.fileID).Scan(&conflicts); err != nil {
		return err
	}
	r := &l.res
	r.Read, r.Loaded, r.Rejected, r.Duplicates, r.Conflicts = read, inserted-dups, rejected, dupLines+dups, conflicts
	if r.Read != r.Loaded+r.Rejected+r.Duplicates {
		return fmt.Errorf("%s: read %d != loaded %d + rejected %d + duplicates %d", l.fi.path, r.Read, r.Loaded, r.Rejected, r.Duplicates)
	}
	if _, err := l.exec(ctx, "ingest_record_file", l.fileID, l.fi.path, l.fi.name, l.fi.size, l.fi.sha256,
		l.fi.format, l.fi.compression, l.m.name, r.Read, r.Loaded, r.Rejected, r.Duplicates, r.NameReused); err != nil {
		return err
	}
	if testHookBeforeCommit != nil {
		testHookBeforeCommit(l.fi.path)
	}
	defer l.timed("commit")()
	if _, err := l.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("%s: commit: %w", l.fi.path, err)
	}
	committed, l.cs.ids = true, ids
	return nil
}

// maxCandidateRuns bounds the queries of one candidate search: past it, one
// scan of the whole table is as cheap.
const maxCandidateRuns = 32

// candidates fills ingest_cand with every row of the case whose request_id
// hash is in ingest_shared. With ingest_case_hits (byFile) only the files
// that hold such a hash are read, in runs of consecutive file_ids: the
// same rows as the scan of the whole table, which hashes every request_id.
func (l *loader) candidates(ctx context.Context, byFile bool) error {
	if !byFile {
		_, err := l.exec(ctx, "ingest_2_candidates")
		return err
	}
	files := []int64{l.fileID}
	done := l.timed("ingest_2_candidate_files")
	rows, err := l.conn.QueryContext(ctx, queries.Get("ingest_2_candidate_files"))
	if err != nil {
		return fmt.Errorf("ingest_2_candidate_files: %w", err)
	}
	for rows.Next() {
		var f int64
		if err := rows.Scan(&f); err != nil {
			rows.Close()
			return err
		}
		files = append(files, f)
	}
	rows.Close()
	done()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ingest_2_candidate_files: %w", err)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	var runs [][2]int64
	for _, f := range files {
		if n := len(runs); n > 0 && runs[n-1][1]+1 == f {
			runs[n-1][1] = f
			continue
		}
		runs = append(runs, [2]int64{f, f})
	}
	l.logger.Debug("candidate files", "file", l.fi.path, "files", len(files), "runs", len(runs))
	if len(runs) > maxCandidateRuns {
		_, err := l.exec(ctx, "ingest_2_candidates")
		return err
	}
	for _, r := range runs {
		if _, err := l.exec(ctx, "ingest_2_candidates_range", r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// openContentWith is openContent with the raw file bytes passed through wrap
// (the progress bar counts bytes on disk).
func openContentWith(path, compression string, wrap func(io.Reader) io.Reader) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rc, err := decompress(wrap(f), compression)
	if err != nil {
		f.Close()
		return nil, err
	}
	out := &readCloser{Reader: rc, close: func() error { rc.Close(); return f.Close() }}
	if compression != compNone {
		out.dmg = &streamDamage{comp: compression}
		out.Reader = &damageReader{r: rc, d: out.dmg}
	}
	return out, nil
}

// sharedFromIDs is ingest_1_shared_only from the hashes the Go reader made
// while it parsed (l.ids, DuckDB's own hash of each request_id): the
// repeated ones go into ingest_shared, without DuckDB reading every id of
// the file back, hashing and sorting them.
func (l *loader) sharedFromIDs(ctx context.Context) (int64, error) {
	defer l.timed("ingest_1_shared_ids")()
	testIDSearches++
	rep := l.ids.repeated()
	l.ids = nil
	if len(rep) == 0 {
		return 0, nil
	}
	err := l.conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "ingest_shared")
		if err != nil {
			return fmt.Errorf("ingest_shared appender: %w", err)
		}
		for _, h := range rep {
			if err := a.AppendRow(h); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
	return int64(len(rep)), err
}
