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

func writeQuery(ctx context.Context, db *sql.DB, query, path string, args ...any) (written, error) {
	return writeFile(ctx, db, File{Query: query}, path, args...)
}

// source is where a file's rows are read from, a piece at a time: piece
// is a query of the rows whose rowid is in [$1, $2), and each calls read
// on every range in order.
type source struct {
	piece, schema string // schema: the rows' columns (LIMIT 0)
	each          func(read func(lo, hi int64) (int64, error)) error
}

// tableSource reads table whole, in its stored order.
func tableSource(table string) source {
	return source{
		piece:  "SELECT * FROM " + table + " WHERE rowid >= $1 AND rowid < $2",
		schema: "SELECT * FROM " + table + " LIMIT 0",
		each:   func(read func(lo, hi int64) (int64, error)) error { return queries.Pieces(readChunk, read) },
	}
}

// scanSource reads f.Query, a scan of f.Table alone, straight from the
// table by rowid ranges from its first to its last rowid (a table's rowids
// follow its stored order; a range a delete emptied is read empty).
func scanSource(ctx context.Context, conn *sql.Conn, f File) (source, error) {
	body := strings.TrimRight(strings.TrimSpace(f.Query), ";")
	if !strings.HasSuffix(body, "\nFROM "+f.Table) || strings.Contains(strings.ToUpper(body), "WHERE") {
		return source{}, fmt.Errorf("sheetcsv: the query of %s does not end with FROM %s (a scan of it alone)", f.Name, f.Table)
	}
	var lo, hi sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT min(rowid), max(rowid) FROM "+f.Table).Scan(&lo, &hi); err != nil {
		return source{}, err
	}
	return source{
		piece:  body + " WHERE rowid >= $1 AND rowid < $2",
		schema: "SELECT * FROM (" + body + ") LIMIT 0",
		each: func(read func(lo, hi int64) (int64, error)) error {
			if !lo.Valid {
				_, err := read(0, 0) // the header
				return err
			}
			for l := lo.Int64; l <= hi.Int64; l += readChunk {
				if _, err := read(l, l+readChunk); err != nil {
					return err
				}
			}
			return nil
		},
	}, nil
}

// writeFile writes f's rows to path. A file with a Table is read straight
// from it; any other query goes into a temp table first.
func writeFile(ctx context.Context, db *sql.DB, f File, path string, args ...any) (st written, err error) {
	t0 := time.Now()
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	if err := queries.InsertionOrdered(ctx, conn); err != nil {
		return st, err
	}
	var src source
	if f.Table != "" {
		if src, err = scanSource(ctx, conn, f); err != nil {
			return st, err
		}
	} else {
		const table = "leakmap_csv_rows"
		body := strings.TrimRight(strings.TrimSpace(f.Query), ";")
		if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE "+table+" AS\n"+body, args...); err != nil {
			return st, err
		}
		defer func() {
			if _, derr := conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table); err == nil {
				err = derr
			}
		}()
		src = tableSource(table)
	}
	st.query = time.Since(t0)
	t1 := time.Now()
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(out, 1<<20)
	// Arrow when every column's type has a formatter (several times
	// faster than rows.Scan, which boxes every value: 3.3M exposures, 4 s
	// of CPU), formatted on every CPU; rows.Scan and field otherwise, with
	// the same bytes.
	viaArrow, err := arrowFormattable(ctx, conn, src.schema)
	if err != nil {
		return st, err
	}
	if viaArrow {
		st.rows, err = writeArrow(ctx, conn, src, bw)
	} else {
		w := NewWriter(bw)
		if st.rows, err = writeScan(ctx, conn, src, w); err == nil {
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
	if err := out.Close(); err != nil {
		return st, err
	}
	st.write = time.Since(t1)
	return st, os.Rename(tmp, path)
}

// writeScan writes the rows of src through rows.Scan and field, piece by
// piece in order.
func writeScan(ctx context.Context, conn *sql.Conn, src source, w *Writer) (int64, error) {
	var vals, ptrs []any
	var rec []string
	var text []bool
	var total int64
	err := src.each(func(lo, hi int64) (int64, error) {
		rows, err := conn.QueryContext(ctx, src.piece, lo, hi)
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
// Table, when set, is the one table Query scans, in its stored order, with
// no filter (its text ends with FROM Table): the file is read straight
// from the table, without a temp copy of every row (45M exposures at 100M
// requests: 18 s to copy, and the copy read back slower than the table).
type File struct{ Name, Query, Table string }

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
		st, err := writeFile(ctx, db, f, filepath.Join(dir, f.Name))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		logger.Info("wrote csv", "file", f.Name, "rows", st.rows,
			"query", st.query.Round(time.Millisecond), "write", st.write.Round(time.Millisecond))
	}
	return nil
}
