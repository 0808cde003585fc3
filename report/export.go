package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"github.com/leakmap/leakmap/casedb"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"
)

// exportParquet writes a table's query to dir/<file>.parquet with DuckDB's
// own writer.
func exportParquet(ctx context.Context, db *sql.DB, t table, dir string) (string, error) {
	path := filepath.Join(dir, t.file+".parquet")
	tmp := path + ".tmp"
	stmt := fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, COMPRESSION zstd)", t.sql, strings.ReplaceAll(tmp, "'", "''"))
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("export %s: %w", filepath.Base(path), err)
	}
	return path, os.Rename(tmp, path)
}

// exportArrow writes a table's query to dir/<file>.arrow as an Arrow IPC
// file (buffers zstd-compressed: the exposures file is ten times smaller),
// reading the result through the driver's Arrow API (no row scans).
func exportArrow(ctx context.Context, db *sql.DB, t table, dir string) (path string, err error) {
	path = filepath.Join(dir, t.file+".arrow")
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp)
			err = fmt.Errorf("export %s: %w", filepath.Base(path), err)
			return
		}
		err = os.Rename(tmp, path)
	}()
	err = casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, t.sql)
		if err != nil {
			return err
		}
		defer rr.Release()
		w, err := ipc.NewFileWriter(out, ipc.WithSchema(rr.Schema()), ipc.WithZstd())
		if err != nil {
			return err
		}
		for rr.Next() {
			rec, err := zeroNulls(rr.RecordBatch())
			if err != nil {
				w.Close()
				return err
			}
			err = w.Write(rec)
			rec.Release()
			if err != nil {
				w.Close()
				return err
			}
		}
		if err := rr.Err(); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
	return path, err
}

// zeroNulls rebuilds the columns that hold NULLs: the driver leaves
// whatever was in memory under a NULL slot, which would make two exports of
// the same rows differ byte for byte. The caller releases the result.
func zeroNulls(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		col := rec.Column(i)
		if col.NullN() == 0 {
			col.Retain()
			cols[i] = col
			continue
		}
		b := array.NewBuilder(memory.DefaultAllocator, col.DataType())
		for r := 0; r < col.Len(); r++ {
			if col.IsNull(r) {
				b.AppendNull()
				continue
			}
			switch a := col.(type) {
			case *array.Int64:
				b.(*array.Int64Builder).Append(a.Value(r))
			case *array.Int32:
				b.(*array.Int32Builder).Append(a.Value(r))
			case *array.String:
				b.(*array.StringBuilder).Append(a.Value(r))
			case *array.Boolean:
				b.(*array.BooleanBuilder).Append(a.Value(r))
			case *array.Timestamp:
				b.(*array.TimestampBuilder).Append(a.Value(r))
			default:
				b.Release()
				for _, c := range cols[:i] {
					c.Release()
				}
				return nil, fmt.Errorf("column %s: type %s with NULLs not handled", rec.ColumnName(i), col.DataType())
			}
		}
		cols[i] = b.NewArray()
		b.Release()
	}
	out := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}
