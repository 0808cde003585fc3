package sheetcsv

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
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

// arrowFormattable reports whether every column of table has a type
// arrowFormat covers.
func arrowFormattable(ctx context.Context, conn *sql.Conn, table string) (bool, error) {
	ok := true
	err := casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, "SELECT * FROM "+table+" LIMIT 0")
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

// writeArrow writes the rows of table through the driver's Arrow API,
// piece by piece in the table's order.
func writeArrow(ctx context.Context, conn *sql.Conn, table string, w *Writer) error {
	return casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		var rec []string
		var text []bool
		var formats []func(int) (string, bool)
		return queries.Pieces(readChunk, func(lo, hi int64) (int64, error) {
			rr, err := ar.QueryContext(ctx, "SELECT * FROM "+table+" WHERE rowid >= $1 AND rowid < $2", lo, hi)
			if err != nil {
				return 0, err
			}
			defer rr.Release()
			if rec == nil {
				var cols []string
				for _, f := range rr.Schema().Fields() {
					cols = append(cols, f.Name)
				}
				if err := w.Write(cols); err != nil {
					return 0, err
				}
				rec, text = make([]string, len(cols)), make([]bool, len(cols))
				formats = make([]func(int) (string, bool), len(cols))
			}
			var n int64
			for rr.Next() {
				b := rr.RecordBatch()
				for c := range formats {
					if formats[c] = arrowFormat(b.Column(c)); formats[c] == nil {
						return n, fmt.Errorf("sheetcsv: column type %s not handled", b.Column(c).DataType())
					}
				}
				for i := 0; i < int(b.NumRows()); i++ {
					for c, f := range formats {
						rec[c], text[c] = f(i)
					}
					if err := w.WriteMixed(rec, text); err != nil {
						return n, err
					}
					n++
				}
			}
			return n, rr.Err()
		})
	})
}
