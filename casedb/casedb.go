// Package casedb opens a leakmap case database (an embedded DuckDB file)
// with the settings every step relies on, and creates its schema.
package casedb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"fmt"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

//go:embed schema.sql
var schemaSQL string

// initStatements run on every new connection: times are read and written in
// UTC, and DuckDB never reaches for the network to fetch an extension.
var initStatements = []string{
	"SET TimeZone = 'UTC'",
	"SET autoinstall_known_extensions = false",
	"SET autoload_known_extensions = false",
}

// Open opens (creating if needed) the case database at path and ensures the
// schema exists. An empty path opens an in-memory database.
func Open(ctx context.Context, path string) (*sql.DB, error) {
	db, _, err := OpenConnector(ctx, path)
	return db, err
}

// OpenConnector is Open that also returns the connector, for callers that
// need a raw driver connection (the Arrow API).
func OpenConnector(ctx context.Context, path string) (*sql.DB, *duckdb.Connector, error) {
	connector, err := duckdb.NewConnector(path, func(execer driver.ExecerContext) error {
		for _, s := range initStatements {
			if _, err := execer.ExecContext(ctx, s, nil); err != nil {
				return fmt.Errorf("init %q: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("open case database %s: %w", path, err)
	}
	db := sql.OpenDB(connector)
	if err := ApplySchema(ctx, db); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, connector, nil
}

// ApplySchema creates every table of the case schema that is missing.
func ApplySchema(ctx context.Context, db *sql.DB) error {
	for _, stmt := range splitStatements(schemaSQL) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("case schema: %w", err)
		}
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
