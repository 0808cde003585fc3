package casedb

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenCreatesSchemaAndUsesUTC(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "case.duckdb")
	for i := 0; i < 2; i++ { // the second open must find the schema and keep it
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"ingest_files", "requests", "rejected_rows", "affected_requests", "exposures", "tenants", "analysis_runs", "notices", "send_ledger"} {
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				t.Errorf("table %s: %v", table, err)
			}
		}
		var got string
		if err := db.QueryRowContext(ctx, "SELECT strftime(TIMESTAMPTZ '2026-09-09 16:00:00+02:00', '%Y-%m-%dT%H:%M:%S')").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := "2026-09-09T14:00:00"; got != want {
			t.Errorf("UTC rendering: got %s, want %s", got, want)
		}
		var ts time.Time
		if err := db.QueryRowContext(ctx, "SELECT TIMESTAMPTZ '2026-09-09 16:00:00+02:00'").Scan(&ts); err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2026, 9, 9, 14, 0, 0, 0, time.UTC); !ts.Equal(want) {
			t.Errorf("scan: got %v, want %v", ts, want)
		}
		db.Close()
	}
}

// TestOpenDropsOnlyInterruptedLoads: rows of a file still marked in
// ingest_pending (a fast ingest cut between its two transactions) are gone
// after Open; rows that came by other means, with no ledger row, stay.
func TestOpenDropsOnlyInterruptedLoads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "case.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO requests SELECT i, 'r' || i, TIMESTAMPTZ '2026-09-01 10:00:00Z', NULL, 't', 'm', 5, NULL, NULL, NULL, NULL, NULL, NULL, 0, f, i
		 FROM (VALUES (1, 5), (2, 5), (3, 6), (4, 7)) AS v(i, f)`,
		`INSERT INTO ingest_pending VALUES (6, 'cut.jsonl')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRowContext(ctx, `SELECT string_agg(request_id, ',' ORDER BY request_id) FROM requests`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "r1,r2,r4"; got != want {
		t.Errorf("requests after Open: got %s, want %s", got, want)
	}
	var pending int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM ingest_pending`).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("ingest_pending after Open: %d rows (%v)", pending, err)
	}
}
