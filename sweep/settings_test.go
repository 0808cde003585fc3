package sweep

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/leakmap/leakmap/casedb"
)

// TestSettingsRestored: the sweep lets DuckDB drop insertion order while it
// runs, and gives it back when it ends (the ingest numbers rows in file
// order on preserve_insertion_order); the allocator's purging (casedb)
// stays on.
func TestSettingsRestored(t *testing.T) {
	ctx := context.Background()
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	setting := func(name string) string {
		var v string
		if err := db.QueryRowContext(ctx, "SELECT current_setting('"+name+"')::VARCHAR").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := map[string]string{}
	for _, name := range []string{"preserve_insertion_order", "allocator_background_threads"} {
		before[name] = setting(name)
	}
	if before["preserve_insertion_order"] != "true" {
		t.Fatalf("preserve_insertion_order is %s before the sweep", before["preserve_insertion_order"])
	}
	if _, err := Run(ctx, db, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range before {
		if got := setting(name); got != want {
			t.Errorf("%s after the sweep: %s, before: %s", name, got, want)
		}
	}
}
