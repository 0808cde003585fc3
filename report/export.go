package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/ipc"
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
	err = conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return errors.New("not a driver connection")
		}
		ar, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return err
		}
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
			if err := w.Write(rr.RecordBatch()); err != nil {
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
