package sweep

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
	"github.com/leakmap/leakmap/internal/sheetcsv"
	"github.com/leakmap/leakmap/queries"
)

// Files are the files WriteCSV writes, in order.
var Files = []string{"sweep.csv", "sweep_days.csv"}

// WriteCSV writes sweep.csv and sweep_days.csv into dir (created if needed)
// from the last sweep: DESIGN.md's columns and order, text cells
// neutralised for spreadsheets (sheetcsv), NULL as an empty field.
func WriteCSV(ctx context.Context, db *sql.DB, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: output folder: %w", err)
	}
	for i, q := range []string{"out_sweep", "out_sweep_days"} {
		if err := writeOne(ctx, db, q, filepath.Join(dir, Files[i])); err != nil {
			return fmt.Errorf("sweep: %s: %w", Files[i], err)
		}
	}
	return nil
}

func writeOne(ctx context.Context, db *sql.DB, query, path string) (err error) {
	rows, err := db.QueryContext(ctx, queries.Get(query))
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
	w := sheetcsv.NewWriter(bw)
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

// field formats one value; text reports whether it is text from the logs
// (neutralised) rather than a number or time leakmap wrote.
func field(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), false
	case int32:
		return strconv.FormatInt(int64(x), 10), false
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), false
	case time.Time:
		return incident.FormatTime(x), false
	}
	return fmt.Sprint(v), true
}
