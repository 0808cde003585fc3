package sheetcsv

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
)

// arrowFormat writes row i of an Arrow column as field writes the value
// rows.Scan gives for it (the text, and whether it is text); nil for a
// type it does not cover.
func arrowFormat(col arrow.Array) func(i int) (string, bool) {
	var f func(i int) (string, bool)
	switch a := col.(type) {
	case *array.String:
		f = func(i int) (string, bool) { return a.Value(i), true }
	case *array.LargeString:
		f = func(i int) (string, bool) { return a.Value(i), true }
	case *array.StringView:
		f = func(i int) (string, bool) { return a.Value(i), true }
	case *array.Int64:
		f = func(i int) (string, bool) { return strconv.FormatInt(a.Value(i), 10), false }
	case *array.Int32:
		f = func(i int) (string, bool) { return strconv.FormatInt(int64(a.Value(i)), 10), false }
	case *array.Uint64:
		f = func(i int) (string, bool) { return strconv.FormatUint(a.Value(i), 10), false }
	case *array.Float64:
		f = func(i int) (string, bool) { return strconv.FormatFloat(a.Value(i), 'f', -1, 64), false }
	case *array.Boolean:
		f = func(i int) (string, bool) { return strconv.FormatBool(a.Value(i)), false }
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		f = func(i int) (string, bool) { return incident.FormatTime(a.Value(i).ToTime(unit)), false }
	default:
		return nil
	}
	return func(i int) (string, bool) {
		if col.IsNull(i) {
			return "", false
		}
		return f(i)
	}
}

// arrowType reports whether arrowFormat covers t, as DuckDB exports
// them (VARCHAR, BIGINT, INTEGER, UBIGINT, DOUBLE, BOOLEAN, TIMESTAMP and
// TIMESTAMPTZ).
func arrowType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.INT64, arrow.INT32,
		arrow.UINT64, arrow.FLOAT64, arrow.BOOL, arrow.TIMESTAMP:
		return true
	}
	return false
}

// arrowFormattable reports whether every column of the rows of schema (a
// query that returns none) has a type arrowFormat covers.
func arrowFormattable(ctx context.Context, conn *sql.Conn, schema string) (bool, error) {
	ok := true
	err := casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, schema)
		if err != nil {
			return err
		}
		defer rr.Release()
		for _, f := range rr.Schema().Fields() {
			ok = ok && arrowType(f.Type)
		}
		return nil
	})
	return ok, err
}

// writeArrow writes the rows of src to out through the driver's Arrow
// API, piece by piece in order, and returns how many. Each
// record batch is formatted on one of GOMAXPROCS workers, into bytes of
// its own (a CSV record's bytes depend on that record alone), and the
// bytes are written in the batches' order: formatting is most of the
// cost of a big file (45M exposures at 100M requests).
func writeArrow(ctx context.Context, conn *sql.Conn, src source, out io.Writer) (int64, error) {
	type job struct {
		rec  arrow.RecordBatch
		done chan formatted
	}
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan job, workers)
	order := make(chan chan formatted, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var bf batchFormatter
			for j := range jobs {
				j.done <- bf.format(j.rec)
				j.rec.Release()
			}
		}()
	}
	// The writer takes the batches' bytes in order; after an error it
	// still drains them (no worker blocks), writing nothing.
	var werr error
	var failed atomic.Bool
	written := make(chan struct{})
	go func() {
		defer close(written)
		for done := range order {
			f := <-done
			if werr == nil {
				werr = f.err
				if werr == nil {
					_, werr = out.Write(f.b)
				}
				if werr != nil {
					failed.Store(true)
				}
			}
		}
	}()
	send := func(rec arrow.RecordBatch, f formatted) {
		done := make(chan formatted, 1)
		order <- done
		if rec == nil {
			done <- f
			return
		}
		jobs <- job{rec, done}
	}
	var total int64
	header := false
	rerr := casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		return src.each(func(lo, hi int64) (int64, error) {
			rr, err := ar.QueryContext(ctx, src.piece, lo, hi)
			if err != nil {
				return 0, err
			}
			defer rr.Release()
			if !header {
				header = true
				var cols []string
				for _, f := range rr.Schema().Fields() {
					cols = append(cols, f.Name)
				}
				var buf bytes.Buffer
				w := NewWriter(&buf)
				err := w.Write(cols)
				if w.Flush(); err == nil {
					err = w.Error()
				}
				send(nil, formatted{buf.Bytes(), err})
			}
			var n int64
			for rr.Next() {
				if failed.Load() {
					return n, errors.New("sheetcsv: writing stopped")
				}
				rec := rr.RecordBatch()
				rec.Retain()
				n += rec.NumRows()
				send(rec, formatted{})
			}
			total += n
			return n, rr.Err()
		})
	})
	close(jobs)
	wg.Wait()
	close(order)
	<-written
	if werr != nil {
		return total, werr // the cause, not the stop it made
	}
	return total, rerr
}

// formatted is one record batch as CSV bytes.
type formatted struct {
	b   []byte
	err error
}

// batchFormatter is one worker's scratch space.
type batchFormatter struct {
	rec     []string
	text    []bool
	formats []func(int) (string, bool)
	size    int // the bytes of the last batch, to size the next one's
}

// format writes the rows of one record batch as CSV records.
func (bf *batchFormatter) format(b arrow.RecordBatch) formatted {
	cols := int(b.NumCols())
	if len(bf.rec) != cols {
		bf.rec, bf.text, bf.formats = make([]string, cols), make([]bool, cols), make([]func(int) (string, bool), cols)
	}
	for c := range bf.formats {
		if bf.formats[c] = arrowFormat(b.Column(c)); bf.formats[c] == nil {
			return formatted{err: fmt.Errorf("sheetcsv: column type %s not handled", b.Column(c).DataType())}
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, bf.size+bf.size/8+64))
	w := NewWriter(buf)
	for i := 0; i < int(b.NumRows()); i++ {
		for c, f := range bf.formats {
			bf.rec[c], bf.text[c] = f(i)
		}
		if err := w.WriteMixed(bf.rec, bf.text); err != nil {
			return formatted{err: err}
		}
	}
	w.Flush()
	bf.size = buf.Len()
	return formatted{buf.Bytes(), w.Error()}
}
