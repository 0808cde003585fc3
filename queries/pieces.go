package queries

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The driver holds a query's whole result in memory before its first row,
// outside DuckDB's memory_limit. A large result is therefore written into
// a temp table (DuckDB's memory: it spills) by a query with an ORDER BY,
// and read back by rowid ranges, which keep the table's order as long as
// DuckDB keeps a table in insertion order.

// rowQuerier is a *sql.DB or a *sql.Conn.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// InsertionOrdered returns an error unless DuckDB keeps tables in the order
// their rows were inserted (preserve_insertion_order, on by default).
func InsertionOrdered(ctx context.Context, q rowQuerier) error {
	var ordered bool
	if err := q.QueryRowContext(ctx, Get("insertion_order")).Scan(&ordered); err != nil {
		return fmt.Errorf("insertion_order: %w", err)
	}
	if !ordered {
		return errors.New("DuckDB's preserve_insertion_order is off: rows read back in pieces would lose their order")
	}
	return nil
}

// Pieces calls read on the row ranges [0, size), [size, 2*size), ... until
// a range holds fewer than size rows (read returns how many it had).
func Pieces(size int64, read func(lo, hi int64) (int64, error)) error {
	for lo := int64(0); ; lo += size {
		n, err := read(lo, lo+size)
		if err != nil || n < size {
			return err
		}
	}
}
