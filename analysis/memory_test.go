package analysis

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/internal/csvtest"
	"github.com/leakmap/leakmap/simulate"
)

// TestSmallMemoryLimit: a 1M-request case ingested and analysed with a
// memory limit far below what DuckDB would take on its own (the default is
// a quarter of the machine, up to 3 GiB): its joins and sorts spill to the
// temp folder beside the case, nothing fails, and the outputs still agree
// with the simulator's truth.
func TestSmallMemoryLimit(t *testing.T) {
	// Minutes on a loaded 2-core machine: CI runs it (.ci/run sets
	// LEAKMAP_TEST_SCALE=1), a developer's package run does not.
	if testing.Short() || os.Getenv("LEAKMAP_TEST_SCALE") == "" {
		t.Skip("1M requests end to end: set LEAKMAP_TEST_SCALE=1")
	}
	ctx := context.Background()
	dir := t.TempDir()
	cfg := simulate.DefaultConfig()
	cfg.Requests, cfg.Tenants = 1_000_000, 2000
	if _, err := simulate.Generate(ctx, nil, dir, cfg); err != nil {
		t.Fatal(err)
	}
	const limit = 256 << 20
	db, err := casedb.OpenWith(ctx, filepath.Join(dir, "case.duckdb"), casedb.Options{MemoryLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var setting string
	if err := db.QueryRow(`SELECT current_setting('memory_limit')`).Scan(&setting); err != nil || setting != "256.0 MiB" {
		t.Fatalf("memory_limit %q (%v)", setting, err)
	}
	if _, err := ingest.Run(ctx, db, nil, []string{filepath.Join(dir, "logs")}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, db, nil, inc); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := WriteCSV(ctx, db, nil, out); err != nil {
		t.Fatal(err)
	}
	// What a memory limit could break is the SQL: the triggers and their
	// recipients must still equal the truth, and the confirmed tier too, as
	// at 12,000 requests (at 2,000 tenants common phrases inside copies are
	// frequent: the shingle-by-shingle specificity count is tested here).
	checkTriggers(t, filepath.Join(dir, "truth"), out)
	exp := csvtest.Read(t, filepath.Join(out, "exposures.csv"))
	if len(exp) == 0 {
		t.Error("no exposure written")
	}
	confirmed := map[string]bool{}
	for _, r := range exp {
		if r["tier"] == TierConfirmed {
			confirmed[r["source_request_id"]+">"+r["trigger_request_id"]] = true
		}
	}
	checkConfirmed(t, filepath.Join(dir, "truth"), confirmed)
}
