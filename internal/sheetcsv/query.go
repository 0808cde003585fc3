package sheetcsv

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
)

// readChunk is how many rows WriteQuery reads back at once.
const readChunk = 1 << 17

// WriteQuery writes the result of query to path (replaced whole, through a
// temporary file beside it): a header of the column names, NULL as an empty
// field, text neutralised, numbers and times as leakmap writes them.
//
// The result goes into a temp table first and is read back readChunk rows
// at a time, in the table's order (the query's ORDER BY: DuckDB keeps a
// table in insertion order): the driver holds a query's whole result in
// memory, outside DuckDB's memory_limit, and an exposures file has a row
// per exposure; a temp table spills.
func WriteQuery(ctx context.Context, db *sql.DB, query, path string, args ...any) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := queries.InsertionOrdered(ctx, conn); err != nil {
		return err
	}
	const table = "leakmap_csv_rows"
	body := strings.TrimRight(strings.TrimSpace(query), ";")
	if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE "+table+" AS\n"+body, args...); err != nil {
		return err
	}
	defer func() {
		if _, derr := conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table); err == nil {
			err = derr
		}
	}()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := NewWriter(bw)
	// Arrow when every column's type has a formatter (several times
	// faster than rows.Scan, which boxes every value: 3.3M exposures, 4 s
	// of CPU); rows.Scan and field otherwise, with the same bytes.
	viaArrow, err := arrowFormattable(ctx, conn, table)
	if err != nil {
		return err
	}
	if viaArrow {
		err = writeArrow(ctx, conn, table, w)
	} else {
		err = writeScan(ctx, conn, table, w)
	}
	if err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeScan writes the rows of table through rows.Scan and field, piece by
// piece in the table's order.
func writeScan(ctx context.Context, conn *sql.Conn, table string, w *Writer) error {
	var vals, ptrs []any
	var rec []string
	var text []bool
	return queries.Pieces(readChunk, func(lo, hi int64) (int64, error) {
		rows, err := conn.QueryContext(ctx, "SELECT * FROM "+table+" WHERE rowid >= $1 AND rowid < $2", lo, hi)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		if vals == nil {
			cols, err := rows.Columns()
			if err != nil {
				return 0, err
			}
			if err := w.Write(cols); err != nil {
				return 0, err
			}
			vals, ptrs = make([]any, len(cols)), make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rec, text = make([]string, len(cols)), make([]bool, len(cols))
		}
		var n int64
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return n, err
			}
			for i, v := range vals {
				rec[i], text[i] = field(v)
			}
			if err := w.WriteMixed(rec, text); err != nil {
				return n, err
			}
			n++
		}
		return n, rows.Err()
	})
}

// field formats one value of a query; text reports whether it is text
// (from the logs: neutralised) rather than a number, flag or time leakmap
// wrote. A type not listed is written as text, the safe side.
func field(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), false
	case int32:
		return strconv.FormatInt(int64(x), 10), false
	case uint64:
		return strconv.FormatUint(x, 10), false
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), false
	case bool:
		return strconv.FormatBool(x), false
	case time.Time:
		return incident.FormatTime(x), false
	}
	return fmt.Sprint(v), true
}

// File is one CSV file of an output folder and the query that fills it.
type File struct{ Name, Query string }

// WriteFolder writes each file from its query into dir (created if needed),
// in order, with WriteQuery.
func WriteFolder(ctx context.Context, db *sql.DB, dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	for _, f := range files {
		if err := WriteQuery(ctx, db, f.Query, filepath.Join(dir, f.Name)); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return nil
}
