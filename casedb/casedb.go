// Package casedb opens a leakmap case database (an embedded DuckDB file)
// with the settings every step relies on, and creates its schema.
package casedb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/queries"
)

//go:embed schema.sql
var schemaSQL string

// initStatements run on every new connection: times are read and written in
// UTC, DuckDB never reaches for the network to fetch an extension, and its
// allocator returns freed memory to the system on background threads, not
// only when a query thread next allocates: the big joins and sorts free
// and allocate more than memory_limit within the allocator's decay time
// (docs/performance.md, "Session 20").
var initStatements = []string{
	"SET TimeZone = 'UTC'",
	"SET autoinstall_known_extensions = false",
	"SET autoload_known_extensions = false",
	"SET allocator_background_threads = true",
}

// Options tune the database engine under a case.
type Options struct {
	// MemoryLimit caps DuckDB's memory, in bytes; beyond it joins and sorts
	// spill to the temp directory beside the case instead of growing.
	// 0: DefaultMemoryLimit.
	MemoryLimit int64
}

// DefaultMemoryLimit is a quarter of physical memory, at most 3 GiB (and
// 1 GiB when physical memory cannot be read): enough for every step, and
// small enough for a responder's laptop or a small VM.
func DefaultMemoryLimit() int64 {
	const ceiling = 3 << 30
	total := physicalMemory()
	if total <= 0 {
		return 1 << 30
	}
	return min(total/4, ceiling)
}

// physicalMemory reads MemTotal from /proc/meminfo; 0 when unknown.
func physicalMemory() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// blockPool is the memory DuckDB keeps for its buffers' blocks (its
// block_allocator_memory): two thirds of the limit. DuckDB hands a freed
// block to the next buffer instead of returning it to the system and
// faulting it in again; at 100M requests that was a third of the page
// faults and about a minute of the first analysis (docs/performance.md,
// "Session 23"). The blocks stay under memory_limit as before; the pages
// of freed blocks stay resident until reused, about 100 MiB more at the
// peak (half the limit kept less and gained less).
func blockPool(limit int64) int64 { return limit / 3 * 2 }

// Open opens (creating if needed) the case database at path with the
// default options and ensures the schema exists. An empty path opens an
// in-memory database.
func Open(ctx context.Context, path string) (*sql.DB, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*sql.DB, error) {
	limit := opts.MemoryLimit
	if limit <= 0 {
		limit = DefaultMemoryLimit()
	}
	stmts := append(slices.Clone(initStatements), fmt.Sprintf("SET memory_limit = '%dB'", limit),
		fmt.Sprintf("SET block_allocator_memory = '%dB'", blockPool(limit)))
	dsn := path
	if path != "" {
		// Spill beside the case (DuckDB's own default for a file, made
		// explicit so an in-flight join never lands elsewhere). It is a
		// setting of the database, given once when it opens: DuckDB
		// refuses to set it again on a new connection once a spill used it.
		dsn = path + "?temp_directory=" + url.QueryEscape(path+".tmp")
	}
	connector, err := duckdb.NewConnector(dsn, func(execer driver.ExecerContext) error {
		for _, s := range stmts {
			if _, err := execer.ExecContext(ctx, s, nil); err != nil {
				return fmt.Errorf("init %q: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open case database %s: %w", path, err)
	}
	db := sql.OpenDB(connector)
	if err := ApplySchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// ParseSize reads a memory size as a user writes it: 3GiB, 512MB, 2G,
// 1048576 (bytes).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 || n*float64(mult) > float64(1<<50) {
		return 0, fmt.Errorf("memory size %q: want a positive size such as 3GiB or 512MB", s)
	}
	return int64(n * float64(mult)), nil
}

// ApplySchema creates every table of the case schema that is missing, and
// brings a case of an earlier version to this one's layout.
func ApplySchema(ctx context.Context, db *sql.DB) error {
	var unsorted bool
	if err := db.QueryRowContext(ctx, queries.Get("casedb_exposures_0_unsorted")).Scan(&unsorted); err != nil {
		return fmt.Errorf("case schema: %w", err)
	}
	// Sorted before the schema creates the marker: a sort that fails is
	// tried again at the next open.
	if unsorted {
		if err := sortExposures(ctx, db); err != nil {
			return err
		}
	}
	if err := execSchema(ctx, db); err != nil {
		return err
	}
	var old bool
	if err := db.QueryRowContext(ctx, queries.Get("casedb_fingerprints_0_old")).Scan(&old); err != nil {
		return fmt.Errorf("case schema: %w", err)
	}
	if !old {
		return nil
	}
	if err := inOneTx(ctx, db, "forget the content index of an earlier version", "casedb_fingerprints_1_drop", "casedb_fingerprints_2_unindex",
		"evidence_00g_forget_state", "evidence_00h_forget_spec_rows", "evidence_00h_forget_spec_memo", "evidence_00h_forget_common_memo"); err != nil {
		return err
	}
	return execSchema(ctx, db) // text_fingerprints again, as it is now
}

// execSchema runs the schema's statements (each may run again: they
// create what is missing), in one transaction: a new case's fifty
// statements were fifty commits, each a sync of the log to disk.
func execSchema(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("case schema: %w", err)
	}
	defer tx.Rollback()
	for _, stmt := range splitStatements(schemaSQL) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("case schema: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("case schema: %w", err)
	}
	return nil
}

// sortExposures stores the exposures of a case of an earlier version in
// exposures.csv's order, once, as analysis_14 inserts them now (the
// outputs read them without a sort). One transaction on one connection:
// the sorted copy is a temp table.
func sortExposures(ctx context.Context, db *sql.DB) error {
	return inOneTx(ctx, db, "sort the exposures of an earlier version",
		"casedb_exposures_1_sorted", "casedb_exposures_2_clear", "casedb_exposures_3_insert", "casedb_exposures_4_drop")
}

// inOneTx runs the named queries in one transaction on one connection
// (their temp tables live on it); what says what they do, in errors.
func inOneTx(ctx context.Context, db *sql.DB, what string, names ...string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("case schema: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("case schema: %w", err)
	}
	defer tx.Rollback()
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, queries.Get(name)); err != nil {
			return fmt.Errorf("case schema: %s: %s: %w", what, name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("case schema: %s: %w", what, err)
	}
	return nil
}

// splitStatements splits a SQL script on semicolons at line ends; the
// schema has no semicolons inside literals.
func splitStatements(script string) []string {
	var out []string
	var b strings.Builder
	for _, line := range strings.Split(script, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || trimmed == "" {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		out = append(out, s)
	}
	return out
}
