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
