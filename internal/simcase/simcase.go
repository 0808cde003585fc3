// Package simcase is test scaffolding: a simulated incident written into a
// test's temp folder and its canonical logs ingested into a case database,
// the first steps of every end-to-end test against the simulator's truth.
package simcase

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/simulate"
)

// Ingested simulates cfg into a new temp folder, ingests its canonical logs
// into DIR/case.duckdb and returns the folder and the open case (closed when
// the test ends).
func Ingested(t testing.TB, cfg simulate.Config) (string, *sql.DB) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := simulate.Generate(ctx, nil, dir, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := casedb.Open(ctx, filepath.Join(dir, "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := ingest.Run(ctx, db, nil, []string{filepath.Join(dir, "logs")}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	return dir, db
}
