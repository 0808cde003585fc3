package queries

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"time"

	"github.com/leakmap/leakmap/internal/memwatch"
)

// Steps runs a command's named queries on one connection of its own: the
// temporary tables of a run live on it, and Close discards the connection
// rather than returning it to the pool, so they (millions of rows for the
// analysis's pairs) die with the run, not with the process.
type Steps struct {
	Conn   *sql.Conn
	scope  string // "analysis", "sweep": error prefix and log message
	logger *slog.Logger
	minLog time.Duration
}

// OpenSteps takes a connection of db for one run. Steps that take at least
// minLog are logged at debug level as "<scope> step" with the query's name,
// elapsed time and memory (internal/memwatch; scripts/bench-analysis reads
// these lines).
func OpenSteps(ctx context.Context, db *sql.DB, scope string, logger *slog.Logger, minLog time.Duration) (*Steps, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", scope, err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Steps{Conn: conn, scope: scope, logger: logger, minLog: minLog}, nil
}

// Exec runs queries/<name>.sql with args.
func (s *Steps) Exec(ctx context.Context, name string, args ...any) error {
	t := time.Now()
	if _, err := s.Conn.ExecContext(ctx, Get(name), args...); err != nil {
		return fmt.Errorf("%s: %s: %w", s.scope, name, err)
	}
	if d := time.Since(t); d >= s.minLog {
		memwatch.Step(ctx, s.logger, s.scope+" step", "query", name, "elapsed", d.Round(time.Millisecond))
	}
	return nil
}

// InTx runs body in one transaction on the connection: the outputs it
// writes change together or not at all.
func (s *Steps) InTx(ctx context.Context, body func() error) error {
	if _, err := s.Conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("%s: begin: %w", s.scope, err)
	}
	if err := body(); err != nil {
		s.Conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	if _, err := s.Conn.ExecContext(ctx, "COMMIT"); err != nil {
		s.Conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("%s: commit: %w", s.scope, err)
	}
	return nil
}

// Close discards the connection (see Steps).
func (s *Steps) Close() {
	s.Conn.Raw(func(any) error { return driver.ErrBadConn })
	s.Conn.Close()
}
