package sheetcsv

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
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
func WriteQuery(ctx context.Context, db *sql.DB, query, path string, args ...any) error {
	_, err := writeQuery(ctx, db, query, path, args...)
	return err
}

// written says what writeQuery did: rows written, and the time the query
// took (into its temp table) and the writing.
type written struct {
	rows         int64
	query, write time.Duration
}

func writeQuery(ctx context.Context, db *sql.DB, query, path string, args ...any) (st written, err error) {
	t0 := time.Now()
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	if err := queries.InsertionOrdered(ctx, conn); err != nil {
		return st, err
	}
	const table = "leakmap_csv_rows"
	body := strings.TrimRight(strings.TrimSpace(query), ";")
	if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE "+table+" AS\n"+body, args...); err != nil {
		return st, err
	}
	st.query = time.Since(t0)
	t1 := time.Now()
	defer func() {
		if _, derr := conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table); err == nil {
			err = derr
		}
	}()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	// Arrow when every column's type has a formatter (several times
	// faster than rows.Scan, which boxes every value: 3.3M exposures, 4 s
	// of CPU), formatted on every CPU; rows.Scan and field otherwise, with
	// the same bytes.
	viaArrow, err := arrowFormattable(ctx, conn, table)
	if err != nil {
		return st, err
	}
	if viaArrow {
		st.rows, err = writeArrow(ctx, conn, table, bw)
	} else {
		w := NewWriter(bw)
		if st.rows, err = writeScan(ctx, conn, table, w); err == nil {
			w.Flush()
			err = w.Error()
		}
	}
	if err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	if err := f.Close(); err != nil {
		return st, err
	}
	st.write = time.Since(t1)
	return st, os.Rename(tmp, path)
}

// writeScan writes the rows of table through rows.Scan and field, piece by
// piece in the table's order.
func writeScan(ctx context.Context, conn *sql.Conn, table string, w *Writer) (int64, error) {
	var vals, ptrs []any
	var rec []string
	var text []bool
	var total int64
	err := queries.Pieces(readChunk, func(lo, hi int64) (int64, error) {
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
		total += n
		return n, rows.Err()
	})
	return total, err
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
// in order, with WriteQuery, and logs what each took.
func WriteFolder(ctx context.Context, db *sql.DB, logger *slog.Logger, dir string, files []File) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	for _, f := range files {
		st, err := writeQuery(ctx, db, f.Query, filepath.Join(dir, f.Name))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		logger.Info("wrote csv", "file", f.Name, "rows", st.rows,
			"query", st.query.Round(time.Millisecond), "write", st.write.Round(time.Millisecond))
	}
	return nil
}
