package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leakmap/leakmap/queries"
)

// pieceRows reads a large result a piece at a time (queries/pieces.go says
// why: the driver holds a whole result in memory, outside memory_limit):
// base_1_table writes it into a temp table on a connection of its own,
// base_2_piece reads size rows of it at a time in the table's order, and
// Close drops it (base_3_drop). At 100M requests the logged texts alone
// are several gigabytes. Its Next, Scan, Err and Close are *sql.Rows's.
type pieceRows struct {
	ctx  context.Context
	conn *sql.Conn
	base string
	size int64
	lo   int64
	rows *sql.Rows // the current piece
	n    int64     // its rows so far
	err  error
}

func openPieces(ctx context.Context, db *sql.DB, base string, size int64) (*pieceRows, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := queries.InsertionOrdered(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, queries.Get(base+"_1_table")); err != nil {
		conn.Close()
		return nil, err
	}
	return &pieceRows{ctx: ctx, conn: conn, base: base, size: size}, nil
}

func (p *pieceRows) Next() bool {
	for p.err == nil {
		if p.rows != nil {
			if p.rows.Next() {
				p.n++
				return true
			}
			p.err = p.rows.Err()
			p.rows.Close()
			p.rows = nil
			if p.n < p.size {
				return false // the last piece
			}
			p.lo += p.size
		}
		if p.err == nil {
			p.rows, p.err = p.conn.QueryContext(p.ctx, queries.Get(p.base+"_2_piece"), p.lo, p.lo+p.size)
			p.n = 0
		}
	}
	return false
}

func (p *pieceRows) Scan(dest ...any) error {
	if p.rows == nil {
		return errors.New("scan without a row")
	}
	return p.rows.Scan(dest...)
}

func (p *pieceRows) Err() error { return p.err }

// Close drops the table and gives the connection back.
func (p *pieceRows) Close() error {
	if p == nil || p.conn == nil {
		return nil
	}
	if p.rows != nil {
		p.rows.Close()
	}
	// A query canceled with ctx still drops its table.
	_, err := p.conn.ExecContext(context.WithoutCancel(p.ctx), queries.Get(p.base+"_3_drop"))
	err = errors.Join(err, p.conn.Close())
	p.conn = nil
	if err != nil {
		return fmt.Errorf("%s: %w", p.base, err)
	}
	return nil
}

// eachPiece calls f on every row of a large result (pieceRows).
func eachPiece(ctx context.Context, db *sql.DB, base string, size int64, f func(scanner) error) error {
	p, err := openPieces(ctx, db, base, size)
	if err != nil {
		return err
	}
	for p.Next() {
		if err := f(p); err != nil {
			p.Close()
			return err
		}
	}
	return errors.Join(p.Err(), p.Close())
}

// scanner is a row being read: *sql.Rows, or pieceRows.
type scanner interface{ Scan(dest ...any) error }
