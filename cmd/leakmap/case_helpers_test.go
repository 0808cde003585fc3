package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakmap/leakmap/casedb"
)

// sqlCase builds DIR/case.duckdb from a SQL script and writes DIR/incident.yaml,
// the starting point of the command tests that need a case but no
// simulation; it returns the two paths.
func sqlCase(t *testing.T, dir, script, incident string) (dbPath, incPath string) {
	t.Helper()
	dbPath = filepath.Join(dir, "case.duckdb")
	db, err := casedb.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		t.Fatal(err)
	}
	incPath = filepath.Join(dir, "incident.yaml")
	if err := os.WriteFile(incPath, []byte(incident), 0o644); err != nil {
		t.Fatal(err)
	}
	return dbPath, incPath
}
