package ingest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// sink receives what a source reads: rows, rejected records, and (engine
// layout only) exact copies of event lines already read.
type sink interface {
	row(line int64, v values) error
	reject(line int64, reason, raw string) error
	duplicateLine()
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// rawText is how a raw line is kept: valid UTF-8 (DuckDB's VARCHAR needs it),
// invalid bytes replaced.
func rawText(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// readJSONL reads canonical-layout JSON Lines. Blank lines are not rows.
func readJSONL(ctx context.Context, r io.Reader, max int, m *Mapping, inst fileInstance, s sink) error {
	var long longLines
	judge := judgeJSONL(m, inst)
	return parallelRecords(ctx, nonBlankLines(ctx, r, true, max, &long), func(b []byte, line int64) outcome {
		if why := long.reason(line); why != "" {
			return outcome{line: line, reason: why, raw: rawText(b)}
		}
		return judge(b, line)
	}, s)
}

// nonBlankLines yields r's non-blank lines with their 1-based numbers
// (blank lines count); with bom, a UTF-8 byte order mark opening line 1 is
// dropped.
// A line over max is yielded (its first bytes) and recorded in long.
func nonBlankLines(ctx context.Context, r io.Reader, bom bool, max int, long *longLines) func(yield func([]byte, int64) error) error {
	return func(yield func([]byte, int64) error) error {
		return nonBlankLinesFrom(ctx, newLineReader(r, max), bom, long, yield)
	}
}

// trimBOM drops a UTF-8 byte order mark opening line 1.
func trimBOM(b []byte, line int64) []byte {
	if line == 1 {
		return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return b
}

// judgeJSONL is the checked path's verdict on one JSON Lines record.
func judgeJSONL(m *Mapping, inst fileInstance) func([]byte, int64) outcome {
	quick := m.isIdentity()
	return func(b []byte, line int64) outcome {
		if quick {
			if v, ok := quickCanonical(b, m); ok {
				return outcome{line: line, v: v, ok: true}
			}
		}
		v, err := parseLine(b, m, inst)
		if err != nil {
			return outcome{line: line, reason: err.Error(), raw: rawText(b)}
		}
		return outcome{line: line, v: v, ok: true}
	}
}

// parseLine is the line-level parse and validation of a canonical-layout
// JSON Lines record (the fuzzed path).
func parseLine(b []byte, m *Mapping, inst fileInstance) (values, error) {
	obj, err := decodeLine(b, m.pick)
	if err != nil {
		return values{}, err
	}
	return canonicalRow(obj, m, inst)
}

// decodeLine is parseJSONObject keeping only what t names, when the
// picker can (jsonpick.go); t nil decodes the whole line.
func decodeLine(b []byte, t *pickTree) (map[string]any, error) {
	if obj, ok := pickLine(b, t); ok {
		return obj, nil
	}
	return parseJSONObject(b)
}

// engineRequest gathers the events of one rid.
type engineRequest struct {
	line     int64 // first event's line
	last     int64 // last event's line
	received map[string]any
	finished map[string]any
	raws     [][]byte // the events' lines, made text only for a reject
	sums     [][32]byte
}

// readEngine reads an engine JSON log: each rid's received and finished
// events become one row, at the line of its first event. What counts as read
// there is a request (its events together), plus every line that belongs to
// none: those are rejected (not JSON, no rid, another event), so nothing is
// dropped unseen. An exact copy of an event line already read (at-least-once
// shipping) counts as a duplicate. A request whose other event is not in the
// file (a rotation boundary) is rejected for the field it lacks.
func readEngine(ctx context.Context, r io.Reader, max int, m *Mapping, inst fileInstance, s sink) error {
	var long longLines
	pending := map[string]*engineRequest{}
	done := map[string][][32]byte{} // rid -> sums of the lines of emitted requests
	ev := m.events
	emit := func(rid string, req *engineRequest) error {
		rec := map[string]any{ev.Key: rid}
		if req.received != nil {
			rec["received"] = req.received
		}
		if req.finished != nil {
			rec["finished"] = req.finished
		}
		delete(pending, rid)
		done[rid] = req.sums
		line := req.line
		if m.toRecords {
			line = req.last // source_records.record_id: the record's last line
		}
		v, err := canonicalRow(rec, m, inst)
		if err != nil {
			texts := make([]string, len(req.raws))
			for i, r := range req.raws {
				texts[i] = rawText(r)
			}
			return s.reject(line, "engine: "+err.Error(), strings.Join(texts, "\n"))
		}
		return s.row(line, v)
	}
	// Lines are parsed on every CPU; events are paired in file order here.
	type event struct {
		line   int64
		raw    []byte // the line (the batch's own copy)
		ev     map[string]any
		rid    string
		kind   string
		reason string // a line that is no request event, or "" for one
		sum    [32]byte
	}
	parse := func(b []byte, line int64) event {
		e := event{line: line, raw: b}
		if e.reason = long.reason(line); e.reason != "" {
			return e
		}
		obj, err := decodeLine(b, m.pickEvent)
		if err != nil {
			e.reason = err.Error()
			return e
		}
		rid, _ := lookup(obj, []string{m.events.Key})
		ridStr, rerr := toString(rid)
		kind, _ := obj[m.events.Kind].(string)
		switch {
		case rid == nil || rerr != nil || ridStr == "":
			e.reason = "engine: no " + m.events.Key
		case kind != m.events.Received && kind != m.events.Finished:
			e.reason = fmt.Sprintf("engine: event %q is not a request event", truncate(kind, 40))
		}
		e.ev, e.rid, e.kind, e.sum = obj, ridStr, kind, sha256.Sum256(b)
		return e
	}
	pair := func(e event) error {
		line, raw, kind, ridStr, sum := e.line, e.raw, e.kind, e.rid, e.sum
		if e.reason != "" {
			return s.reject(line, e.reason, rawText(raw))
		}
		if slices.Contains(done[ridStr], sum) {
			s.duplicateLine()
			return nil
		}
		req := pending[ridStr]
		if req == nil {
			if _, seen := done[ridStr]; seen {
				// A different event for a request already complete.
				return s.reject(line, "engine: another "+kind+" event for a complete request", rawText(raw))
			}
			req = &engineRequest{line: line}
			pending[ridStr] = req
		}
		if slices.Contains(req.sums, sum) {
			s.duplicateLine()
			return nil
		}
		slot := &req.received
		if kind == m.events.Finished {
			slot = &req.finished
		}
		if *slot != nil {
			return s.reject(line, "engine: a second, different "+kind+" event for this rid", rawText(raw))
		}
		*slot = e.ev
		req.last = line
		req.raws = append(req.raws, raw)
		req.sums = append(req.sums, sum)
		if req.received != nil && req.finished != nil {
			return emit(ridStr, req)
		}
		return nil
	}
	if err := parallelMap(ctx, nonBlankLines(ctx, r, false, max, &long), parse, pair); err != nil {
		return err
	}
	// Requests still waiting for an event, in file order.
	rids := make([]string, 0, len(pending))
	for rid := range pending {
		rids = append(rids, rid)
	}
	sort.Slice(rids, func(i, j int) bool { return pending[rids[i]].line < pending[rids[j]].line })
	for _, rid := range rids {
		if err := emit(rid, pending[rid]); err != nil {
			return err
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// readCSV reads a CSV file with a header. A record's line is the physical
// line it starts on (the header is line 1), and its raw text is kept exactly:
// records are cut on line ends outside quotes before being parsed.
func readCSV(ctx context.Context, r io.Reader, max int, m *Mapping, inst fileInstance, s sink) error {
	var long longLines
	// header is set by produce before it yields a record; judge reads it
	// after (the batch's channel send orders the two).
	var header []string
	// A record over max bytes (one line over it, or a quoted field going
	// on over many lines) is rejected at its first line; only its first
	// bytes are kept. A line over max ends its record.
	produce := func(yield func([]byte, int64) error) error {
		lr := newLineReader(r, max)
		var chunk []byte
		q := csvQuotes{fieldStart: true}
		start, size := int64(0), int64(0)
		started, over := false, false
		why := "" // a reason other than the length (the stream broke)
		for {
			b, line, err := lr.next()
			le := (*longLineError)(nil)
			if errors.As(err, &le) {
				err = nil
			}
			eof := errors.Is(err, io.EOF)
			if err != nil && !eof {
				return err
			}
			if !eof {
				if line%4096 == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
				n := int64(len(b))
				if le != nil {
					n, why = le.size, le.why
				}
				if !started {
					if le == nil && isBlank(b) {
						continue
					}
					started, start = true, line
				} else {
					size++
					if !over || len(chunk) < keepLongBytes {
						chunk = append(chunk, '\n')
					}
				}
				size += n
				if !over && (le != nil || size > int64(lr.max)) {
					over = true
					chunk = chunk[:min(len(chunk), keepLongBytes)]
				}
				if !over {
					chunk = append(chunk, b...)
				} else if room := keepLongBytes - len(chunk); room > 0 {
					chunk = append(chunk, b[:min(len(b), room)]...)
				}
				if le == nil && q.scan(b) { // a quoted field goes on over the line end
					continue
				}
			}
			if !started {
				return nil
			}
			switch {
			case header == nil && over:
				return fmt.Errorf("line %d: csv header: %s", start, longReason(size, lr.max))
			case header == nil:
				rec, perr := parseCSVRecord(string(chunk))
				if perr != nil {
					return fmt.Errorf("line %d: csv header: %w", start, perr)
				}
				for i := range rec {
					rec[i] = strings.TrimSpace(strings.TrimPrefix(rec[i], "\ufeff"))
				}
				header = rec
			default:
				if over {
					long.add(&longLineError{line: start, size: size, max: lr.max, why: why})
				}
				if err := yield(chunk, start); err != nil {
					return err
				}
			}
			chunk = chunk[:0]
			q = csvQuotes{fieldStart: true}
			started, over, size, why = false, false, 0, ""
			if eof {
				return nil
			}
		}
	}
	judge := func(b []byte, line int64) outcome {
		raw := string(b)
		reject := func(reason string) outcome { return outcome{line: line, reason: reason, raw: rawText(b)} }
		if why := long.reason(line); why != "" {
			return reject(why)
		}
		rec, perr := parseCSVRecord(raw)
		switch {
		case perr != nil:
			return reject("csv: " + perr.Error())
		case len(rec) != len(header):
			return reject(fmt.Sprintf("csv: %d fields, header has %d", len(rec), len(header)))
		}
		obj := make(map[string]any, len(header))
		for i, h := range header {
			if m.pick != nil && !m.pick.whole && m.pick.kids[h] == nil {
				continue // a column no path reads
			}
			obj[h] = m.pickCell(h, rec[i])
		}
		v, err := canonicalRow(obj, m, inst)
		if err != nil {
			return reject(err.Error())
		}
		return outcome{line: line, v: v, ok: true}
	}
	return parallelRecords(ctx, produce, judge, s)
}

// csvQuotes follows CSV quoting across the lines of one record, as
// encoding/csv reads it: a quote opens a quoted field only at the start of
// a field; inside one, "" is a quote and a lone " closes it.
type csvQuotes struct{ inQuotes, fieldStart bool }

// scan reads one line and reports whether the record goes on after it.
func (q *csvQuotes) scan(line []byte) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if q.inQuotes {
			if c == '"' {
				if i+1 < len(line) && line[i+1] == '"' {
					i++
				} else {
					q.inQuotes = false
				}
			}
			continue
		}
		switch {
		case c == '"' && q.fieldStart:
			q.inQuotes = true
			q.fieldStart = false
		case c == ',':
			q.fieldStart = true
		default:
			q.fieldStart = false
		}
	}
	return q.inQuotes
}

func parseCSVRecord(raw string) ([]string, error) {
	// csv.NewReader wraps its input in a new 4 KiB buffer unless it is given
	// one: per record, that was most of the checked CSV path's allocation.
	br := csvBufs.Get().(*bufio.Reader)
	defer csvBufs.Put(br)
	br.Reset(strings.NewReader(raw))
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	if _, err := cr.Read(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one record on the line")
	}
	return rec, nil
}

var csvBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// csvHeader returns the header of a CSV file's first bytes.
func csvHeader(head []byte) ([]string, error) {
	lr := newLineReader(bytes.NewReader(head), 0)
	for {
		b, _, err := lr.next()
		if err != nil {
			return nil, errors.New("no header line")
		}
		if isBlank(b) {
			continue
		}
		rec, err := parseCSVRecord(strings.TrimPrefix(string(b), "\ufeff"))
		if err != nil {
			return nil, fmt.Errorf("csv header: %w", err)
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		return rec, nil
	}
}

// readParquet reads a Parquet file through DuckDB's reader; a row's line is
// its 1-based row number in the file, and its raw text is the row as JSON.
// It queries the load's own driver connection (the one the appenders use,
// inside the file's transaction), so a pool of one connection serves.
func readParquet(ctx context.Context, dc driver.Conn, path string, m *Mapping, inst fileInstance, s sink) error {
	q, ok := dc.(driver.QueryerContext)
	if !ok {
		return errors.New("parquet: the driver cannot query")
	}
	rows, err := q.QueryContext(ctx, "SELECT * FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number",
		[]driver.NamedValue{{Ordinal: 1, Value: path}})
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	defer rows.Close()
	cols := rows.Columns()
	vals := make([]driver.Value, len(cols))
	for {
		if err := rows.Next(vals); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("parquet: %w", err)
		}
		obj := make(map[string]any, len(cols))
		var line int64
		for i, c := range cols {
			if c == "file_row_number" {
				line, _ = toInt(vals[i])
				line++
				continue
			}
			obj[c] = normaliseDuck(vals[i])
		}
		v, cerr := canonicalRow(obj, m, inst)
		if cerr != nil {
			raw, _ := json.Marshal(obj)
			err = s.reject(line, cerr.Error(), string(raw))
		} else {
			err = s.row(line, v)
		}
		if err != nil {
			return err
		}
	}
}

// normaliseDuck turns DuckDB scan values into what lookup and the converters
// read: nested structs as maps, bytes as text.
func normaliseDuck(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normaliseDuck(e)
		}
		return out
	case []byte:
		return string(x)
	case time.Time:
		return x
	default:
		return x
	}
}
