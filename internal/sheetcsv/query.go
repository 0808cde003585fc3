package sheetcsv

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/leakmap/leakmap/incident"
)

// WriteQuery writes the result of query to path (replaced whole, through a
// temporary file beside it): a header of the column names, NULL as an empty
// field, text neutralised, numbers and times as leakmap writes them.
func WriteQuery(ctx context.Context, db *sql.DB, query, path string, args ...any) (err error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
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
	if err := w.Write(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	text := make([]bool, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			rec[i], text[i] = field(v)
		}
		if err := w.WriteMixed(rec, text); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
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
