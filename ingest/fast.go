package ingest

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/queries"
)

// maxBlankLines bounds the blank lines the fast path renumbers around; a
// file with more (a double-spaced log) takes the checked path.
const maxBlankLines = 1000

// sampleEvery: every so many lines, the line check keeps the request_id of
// the line, and the fast path checks that the row numbered with that line
// has it (about 1,200 checks for 5M lines, a few milliseconds).
const sampleEvery = 4096

// lineCheck is the fast path's own look at the file, run beside DuckDB's
// reader: how many lines it has and which are blank. DuckDB's reader skips
// blank lines silently; every other line gives exactly one row (a row of
// NULLs when it does not parse), so rows = lines - blank lines, and a row's
// line follows from its position and the blank lines before it. Samples
// verify that: line -> request_id, as Go reads the line.
type lineCheck struct {
	lines   int64
	blanks  []int64 // line numbers, ascending; nil beyond maxBlankLines
	many    bool    // more than maxBlankLines blank lines
	samples map[int64]string
	// suspect lists lines the checked path must judge, ascending: over the
	// line limit, or holding maxJSONDepth brackets (perhaps nested deeper).
	suspect []int64
	err     error
}

func checkLines(ctx context.Context, path, compression string, maxLine int, prog *progress) lineCheck {
	rc, err := openContentWith(path, compression, prog.reader)
	if err != nil {
		return lineCheck{err: err}
	}
	defer rc.Close()
	buf := make([]byte, 1<<20)
	c := lineCheck{samples: map[int64]string{}}
	// A line starting with '{' is not blank; any other is gathered whole and
	// judged as the checked path judges it (isBlank). Those are rare, and so
	// are sampled lines, gathered whole too. A line over the line limit is
	// not gathered past it: it is no blank line and no sample (the checked
	// path rejects it).
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	var whole []byte
	gathering, odd, atLineStart, over := false, false, true, false
	gather := func(b []byte) {
		if over = over || len(whole)+len(b) > maxLine+1; !over {
			whole = append(whole, b...)
		}
	}
	endLine := func() {
		switch {
		case over:
		case odd && isBlank(whole):
			if len(c.blanks) == maxBlankLines {
				c.many = true
			} else {
				c.blanks = append(c.blanks, c.lines)
			}
		case !odd:
			if obj, err := parseJSONObject(whole); err == nil {
				if id, ok := obj["request_id"].(string); ok {
					c.samples[c.lines] = id
				}
			}
		}
		whole, gathering, over = whole[:0], false, false
	}
	var lineLen int64 // bytes of the current line so far, its '\n' excluded
	var last byte
	nBrackets := 0
	finishLine := func() {
		if last == '\r' {
			lineLen--
		}
		if lineLen > int64(maxLine) || nBrackets >= maxJSONDepth {
			c.suspect = append(c.suspect, c.lines)
		}
		lineLen, last, nBrackets = 0, 0, 0
	}
	for {
		if ctx.Err() != nil {
			return lineCheck{err: ctx.Err()}
		}
		n, err := rc.Read(buf)
		for b := buf[:n]; len(b) > 0; {
			if atLineStart {
				c.lines++
				atLineStart = false
				odd = b[0] != '{'
				gathering = odd || c.lines%sampleEvery == 1
			}
			i := bytes.IndexByte(b, '\n')
			seg := b
			if i >= 0 {
				seg = b[:i]
			}
			if lineLen += int64(len(seg)); len(seg) > 0 {
				last = seg[len(seg)-1]
			}
			if nBrackets < maxJSONDepth {
				nBrackets += brackets(seg)
			}
			if gathering {
				gather(seg)
				if i >= 0 {
					whole = bytes.TrimSuffix(whole, []byte("\r"))
					endLine()
				}
			}
			if i < 0 {
				break
			}
			finishLine()
			b = b[i+1:]
			atLineStart = true
		}
		if errors.Is(err, io.EOF) {
			if d := damageOf(rc); d != nil && d.err != nil {
				return lineCheck{err: d.err} // the checked path loads what it holds
			}
			if gathering {
				endLine()
			}
			if !atLineStart {
				finishLine()
			}
			if c.many {
				c.blanks = nil
			}
			return c
		}
		if err != nil {
			return lineCheck{err: err}
		}
	}
}

// lineOf maps the position of a row among the file's rows (1-based) to its
// line: the position plus the blank lines before it.
func lineOf(pos int64, blanks []int64) int64 {
	// The i-th blank line (0-based) comes before position p when
	// blanks[i] - i <= p.
	n := sort.Search(len(blanks), func(i int) bool { return blanks[i]-int64(i) > pos })
	return pos + int64(n)
}

// fast loads a canonical JSON Lines file with DuckDB's reader straight into
// requests, in two transactions. A line the reader cannot parse, or whose
// values it cannot judge exactly as the checked path would, comes in as a
// placeholder; those lines alone are then read again in Go and loaded or
// rejected there, with their raw text. It reports false (the caller takes
// the checked path) when the rows cannot be matched to lines: the reader
// failed outright, the counts disagree, too many blank lines.
//
// DuckDB's reader runs on all threads and numbers nothing in file order, but
// it inserts in file order (preserve_insertion_order), so a row's position
// is its rowid minus the file's first rowid, plus one. Setting lines in the
// load's own transaction made its commit rewrite every row (1.0 s of 7.5 s
// for 5M rows); on committed rows it costs 0.1 s. So the first transaction
// commits the rows, with line 0 and no ingest_files row; the second numbers
// them, settles the placeholders, drops duplicates and records the file.
// Until it commits, the rows are not part of the case: the first
// transaction marks them in ingest_pending; a failure deletes them, and
// after a crash casedb.Open does (schema.sql).
func (l *loader) fast(ctx context.Context) (bool, error) {
	if err := l.begin(ctx); err != nil {
		return false, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	checked := make(chan lineCheck, 1)
	go func() { checked <- checkLines(cctx, l.fi.path, l.fi.compression, l.fi.maxLine, l.prog) }()
	comp := map[string]string{compNone: "uncompressed", compGzip: "gzip", compZstd: "zstd"}[l.fi.compression]
	n, err := l.exec(ctx, "ingest_fast_jsonl", l.fileID, l.fi.path, comp)
	if err != nil {
		cancel()
	}
	c := <-checked
	if ctx.Err() != nil {
		l.rollback()
		return false, ctx.Err()
	}
	if err != nil || c.err != nil || c.many || n != c.lines-int64(len(c.blanks)) || c.lines > maxLine {
		l.logger.Debug("fast reader", "file", l.fi.path, "rows", n, "lines", c.lines, "blank_lines", len(c.blanks),
			"more_blank_lines_than", c.many, "reader_err", err, "line_count_err", c.err)
		l.rollback()
		return false, nil
	}
	if _, err := l.exec(ctx, "ingest_pending_add", l.fileID, l.fi.path); err != nil {
		l.rollback()
		return false, err
	}
	done := l.timed("commit_rows")
	if _, err := l.conn.ExecContext(ctx, "COMMIT"); err != nil {
		l.rollback()
		return false, fmt.Errorf("%s: commit rows: %w", l.fi.path, err)
	}
	done()
	if testHookAfterRows != nil {
		if err := testHookAfterRows(l.fi.path); err != nil {
			return false, err // a crash: nothing cleans up
		}
	}
	ok, err := l.numberAndFinish(ctx, n, c)
	if err != nil || !ok {
		l.rollback()
		if derr := l.deleteRows(); derr != nil {
			err = errors.Join(err, derr)
		}
	}
	return ok, err
}

// numberAndFinish is the fast path's second transaction: n rows, in file
// order, around c's blank lines.
func (l *loader) numberAndFinish(ctx context.Context, n int64, c lineCheck) (bool, error) {
	if _, err := l.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return false, err
	}
	var count, first, last int64
	if err := l.conn.QueryRowContext(ctx, queries.Get("ingest_fast_check"), l.fileID).Scan(&count, &first, &last); err != nil {
		return false, err
	}
	if count != n || last-first+1 != n {
		// Not one run of rows in insertion order: lines cannot be derived.
		l.logger.Debug("fast load not contiguous", "file", l.fi.path, "rows", count, "first", first, "last", last)
		return false, nil
	}
	for _, line := range c.suspect {
		// Its row becomes a placeholder, judged again in Go (too long, too deep).
		blanks := sort.Search(len(c.blanks), func(i int) bool { return c.blanks[i] >= line })
		if _, err := l.exec(ctx, "ingest_fast_mark_placeholder", l.fileID, first, line-int64(blanks)); err != nil {
			return false, err
		}
	}
	redo, err := l.placeholderLines(ctx, first, c.blanks)
	if err != nil {
		return false, err
	}
	if len(redo) > 0 {
		if _, err := l.exec(ctx, "ingest_fast_drop_placeholders", l.fileID); err != nil {
			return false, err
		}
	}
	if _, err := l.exec(ctx, "ingest_fast_number", l.fileID, first); err != nil {
		return false, err
	}
	if err := l.shiftPastBlanks(ctx, c.blanks); err != nil {
		return false, err
	}
	if ok, err := l.samplesMatch(ctx, c.samples, redo); err != nil || !ok {
		return false, err
	}
	var s *rowSink
	if len(redo) > 0 {
		l.logger.Debug("checking lines the fast reader could not judge", "file", l.fi.path, "lines", len(redo))
		var ok bool
		s, err = l.appendRows(ctx, func(s *rowSink, _ driver.Conn) error {
			var rerr error
			ok, rerr = l.recheck(ctx, redo, s)
			return rerr
		})
		if err != nil || !ok {
			return false, err
		}
	} else {
		s = &rowSink{}
	}
	if _, err := l.exec(ctx, "ingest_pending_done", l.fileID); err != nil {
		return false, err
	}
	placeholders := int64(len(redo))
	return true, l.finish(ctx, n, n-placeholders+s.appended, s.rejected, 0)
}

// samplesMatch checks, on the sampled lines DuckDB's reader loaded, that the
// row numbered with the line carries the request_id Go read on it: the
// numbering rests on DuckDB inserting rows in file order, and a mismatch
// sends the file to the checked path rather than load wrong lines.
func (l *loader) samplesMatch(ctx context.Context, samples map[int64]string, redo []int64) (bool, error) {
	if _, err := l.exec(ctx, "ingest_0_sample"); err != nil {
		return false, err
	}
	skip := make(map[int64]bool, len(redo))
	for _, line := range redo {
		skip[line] = true
	}
	lines := make([]int64, 0, len(samples))
	for line := range samples {
		if !skip[line] {
			lines = append(lines, line)
		}
	}
	if testHookSamples != nil {
		testHookSamples(samples)
	}
	err := l.conn.Raw(func(dc any) error {
		conn, ok := dc.(driver.Conn)
		if !ok {
			return errors.New("ingest: not a DuckDB connection")
		}
		a, err := duckdb.NewAppender(conn, "temp", "main", "ingest_sample")
		if err != nil {
			return fmt.Errorf("sample appender: %w", err)
		}
		for _, line := range lines {
			if err := a.AppendRow(line, samples[line]); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
	if err != nil {
		return false, err
	}
	var bad int64
	if err := l.conn.QueryRowContext(ctx, queries.Get("ingest_fast_sample_mismatch"), l.fileID).Scan(&bad); err != nil {
		return false, fmt.Errorf("ingest_fast_sample_mismatch: %w", err)
	}
	l.logger.Debug("sampled lines", "file", l.fi.path, "checked", len(lines), "mismatched", bad)
	if bad > 0 {
		l.logger.Warn("rows out of file order after DuckDB's read; checking the file line by line", "file", l.fi.path,
			"sampled_lines", len(lines), "mismatched", bad)
		return false, nil
	}
	return true, nil
}

// placeholderLines lists the lines of the file's placeholder rows.
func (l *loader) placeholderLines(ctx context.Context, first int64, blanks []int64) ([]int64, error) {
	rows, err := l.conn.QueryContext(ctx, queries.Get("ingest_fast_placeholders"), l.fileID, first)
	if err != nil {
		return nil, fmt.Errorf("ingest_fast_placeholders: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var pos int64
		if err := rows.Scan(&pos); err != nil {
			return nil, err
		}
		out = append(out, lineOf(pos, blanks))
	}
	return out, rows.Err()
}

// shiftPastBlanks moves the line (and row_id) of every row after a blank
// line down by the blank lines before it, in one update over a table of
// position ranges.
func (l *loader) shiftPastBlanks(ctx context.Context, blanks []int64) error {
	if len(blanks) == 0 {
		return nil
	}
	if _, err := l.exec(ctx, "ingest_0_shift"); err != nil {
		return err
	}
	for i, b := range blanks {
		lo := b - int64(i) // first position after blank line i
		hi := int64(maxLine)
		if i+1 < len(blanks) {
			hi = blanks[i+1] - int64(i+1) - 1
		}
		if lo > hi {
			continue // blank lines in a row
		}
		if _, err := l.conn.ExecContext(ctx, queries.Get("ingest_shift_add"), lo, hi, i+1); err != nil {
			return fmt.Errorf("ingest_shift_add: %w", err)
		}
	}
	_, err := l.exec(ctx, "ingest_fast_shift", l.fileID)
	return err
}

// recheck reads the file again and hands the given lines (ascending) to the
// checked path's parser. It reports false if one of them is blank, which
// means the reader and the line count disagree about the file.
func (l *loader) recheck(ctx context.Context, lines []int64, s sink) (bool, error) {
	rc, err := openContentWith(l.fi.path, l.fi.compression, func(r io.Reader) io.Reader { return r })
	if err != nil {
		return false, fmt.Errorf("%s: %w", l.fi.path, err)
	}
	defer rc.Close()
	// The file's torn last line, if one of these, is rejected as the
	// checked path rejects it (torn.go).
	// Only the file's last line can be torn: the fast path loaded the
	// lines after the last one judged here, if there are any.
	end := &endReader{r: rc}
	ts := newTornSink(s, end)
	lr := newLineReader(end, l.fi.maxLine)
	ok, err := l.recheckLines(ctx, lines, lr, ts)
	if err != nil || !ok {
		return ok, err
	}
	_, _, after := lr.next()
	damage, err := tornOf(ts).finish(!errors.Is(after, io.EOF))
	if err != nil {
		return false, err
	}
	if l.fi.damage == "" {
		l.fi.damage = damage
	}
	return true, nil
}

func (l *loader) recheckLines(ctx context.Context, lines []int64, lr *lineReader, s sink) (bool, error) {
	judge := judgeJSONL(l.m, fileInstance{})
	var err error
	var b []byte
	var line int64
	var long *longLineError
	for _, want := range lines {
		for line < want {
			b, line, err = lr.next()
			if long = nil; errors.As(err, &long) {
				err = nil
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					return false, fmt.Errorf("%s: line %d: the file ends at line %d", l.fi.path, want, line)
				}
				return false, fmt.Errorf("%s: %w", l.fi.path, err)
			}
			if line%4096 == 0 && ctx.Err() != nil {
				return false, ctx.Err()
			}
		}
		if long != nil {
			if err := s.reject(line, long.Error(), rawText(b)); err != nil {
				return false, err
			}
			continue
		}
		b = trimBOM(b, line)
		if isBlank(b) {
			return false, nil
		}
		if err := judge(b, line).to(s); err != nil {
			return false, err
		}
	}
	return true, nil
}

// deleteRows removes the committed rows of a fast load that did not finish,
// then its loading mark (a crash between the two leaves the mark, and
// casedb.Open finishes the job); like rollback, it runs even when ctx is
// cancelled.
func (l *loader) deleteRows() error {
	for _, q := range []string{"ingest_delete_file_rows", "ingest_pending_done"} {
		if _, err := l.conn.ExecContext(context.Background(), queries.Get(q), l.fileID); err != nil {
			return fmt.Errorf("%s: delete unfinished rows: %s: %w", l.fi.path, q, err)
		}
	}
	return nil
}
