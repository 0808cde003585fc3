//go:build linux && cgo

package casedb

import (
	"context"
	"os"
	"testing"
)

// TestAllocatorGivesPagesBack checks that DuckDB's jemalloc runs with
// leakmap's decay time once a case is open: in the arenas it has and in
// those it makes.
func TestAllocatorGivesPagesBack(t *testing.T) {
	db, err := Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Work on several threads, so that more than one arena is in use.
	if _, err := db.Exec(`CREATE TABLE t AS SELECT range % 977 AS k, repeat('x', 200) AS v FROM range(2000000); SELECT k, count(*) FROM t GROUP BY k`); err != nil {
		t.Fatal(err)
	}
	if _, own := os.LookupEnv("DUCKDB_JE_MALLOC_CONF"); own {
		t.Skip("DUCKDB_JE_MALLOC_CONF set by the user")
	}
	const want = allocatorDecayMS
	if d, m, nd, nm := allocatorDecay(); d != want || m != want || nd != want || nm != want {
		t.Errorf("jemalloc decay (ms): arena 0 dirty %d muzzy %d, new arenas dirty %d muzzy %d; want all %d", d, m, nd, nm, want)
	}
}
