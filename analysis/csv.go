package analysis

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

// WriteCSV writes affected_requests.csv, exposures.csv and tenants.csv into
// dir (created if needed), from queries/out_*.sql: the columns and order of
// DESIGN.md, a header line, NULL as an empty field. They are meant for
// spreadsheets: text cells that would run as a formula are neutralised
// (sheetcsv); numbers and times are written as they are.
func WriteCSV(ctx context.Context, db *sql.DB, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("analysis: output folder: %w", err)
	}
	for _, o := range outputs {
		if err := writeOneCSV(ctx, db, queries.Get(o.query), filepath.Join(dir, o.file)); err != nil {
			return fmt.Errorf("analysis: %s: %w", o.file, err)
		}
	}
	return nil
}

func writeOneCSV(ctx context.Context, db *sql.DB, query, path string) (err error) {
	rows, err := db.QueryContext(ctx, query)
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
			rec[i] = csvField(v)
			switch v.(type) {
			case string, []byte:
				text[i] = true
			default:
				text[i] = false
			}
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

func csvField(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return incident.FormatTime(x)
	default:
		return fmt.Sprint(x)
	}
}
