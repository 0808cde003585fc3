package casedb

import (
	"context"
	"database/sql"
	"os"
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

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"3GiB", 3 << 30, true}, {"512MB", 512e6, true}, {"2G", 2 << 30, true},
		{"1048576", 1 << 20, true}, {"1.5 GiB", 3 << 29, true}, {"64MiB", 64 << 20, true},
		{"", 0, false}, {"-1G", 0, false}, {"lots", 0, false}, {"0", 0, false}, {"9999999TB", 0, false},
	} {
		got, err := ParseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestOpenWithMemoryLimit: the limit, the block pool (two thirds of it) and
// the spill folder beside the case are what every connection of the pool
// runs with.
func TestOpenWithMemoryLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.duckdb")
	db, err := OpenWith(context.Background(), path, Options{MemoryLimit: 300 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(3)
	for i := 0; i < 3; i++ {
		var limit, pool, temp string
		var purge bool
		if err := db.QueryRow(`SELECT current_setting('memory_limit'), current_setting('block_allocator_memory'), current_setting('temp_directory'), current_setting('allocator_background_threads')`).Scan(&limit, &pool, &temp, &purge); err != nil {
			t.Fatal(err)
		}
		if limit != "300.0 MiB" || pool != "200.0 MiB" || temp != path+".tmp" || !purge {
			t.Errorf("memory_limit %q block_allocator_memory %q temp_directory %q allocator_background_threads %v", limit, pool, temp, purge)
		}
	}
	if d := DefaultMemoryLimit(); d <= 0 || d > 3<<30 {
		t.Errorf("default memory limit %d", d)
	}
}

// TestNewConnectionAfterSpill: once a query has spilled to the temp folder,
// a new connection of the pool still opens (DuckDB refuses to set the temp
// folder again after it was used, so it is set once, when the database
// opens).
func TestNewConnectionAfterSpill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "case.duckdb")
	db, err := OpenWith(ctx, path, Options{MemoryLimit: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := first.ExecContext(ctx, `SET threads = 1`); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := first.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT md5(i::VARCHAR) || md5((i + 1)::VARCHAR) AS s FROM range(2000000) r(i) ORDER BY s)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	second, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("a new connection after a spill: %v", err)
	}
	defer second.Close()
	var temp string
	if err := second.QueryRowContext(ctx, `SELECT current_setting('temp_directory')`).Scan(&temp); err != nil || temp != path+".tmp" {
		t.Errorf("temp_directory %q (%v)", temp, err)
	}
	if _, err := os.Stat(path + ".tmp"); err != nil {
		t.Errorf("no spill folder beside the case: %v", err)
	}
}

// TestRFC3339Macro: the outputs' one time format, checked against Go's
// formatting of the same instants (whole seconds, microseconds, before
// 1970, the extremes, offsets other than UTC), and the values Go has no
// instant for (NULL, ±infinity) as DuckDB writes them.
func TestRFC3339Macro(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	format := func(tm time.Time) string {
		if tm.Nanosecond() == 0 {
			return tm.UTC().Format("2006-01-02T15:04:05Z")
		}
		return tm.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	instants := []string{
		"2026-09-09 16:00:00+02:00", "2026-09-09 14:00:00.5Z", "2026-09-09 14:00:00.000001Z",
		"2026-02-28 23:59:59.999999-05:30", "1969-12-31 23:59:59.5Z", "1969-12-31 23:59:59Z",
		"1900-03-01 12:00:00.000001Z", "0001-01-01 00:00:00Z", "9999-12-31 23:59:59.999999Z",
	}
	for _, in := range instants {
		var tm time.Time
		var got string
		if err := db.QueryRowContext(ctx, "SELECT ?::TIMESTAMPTZ, rfc3339(?::TIMESTAMPTZ)", in, in).Scan(&tm, &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if want := format(tm); got != want {
			t.Errorf("rfc3339(%s) = %s, want %s", in, got, want)
		}
	}
	// A day of times 7,919,013 µs apart: every fraction and second.
	var bad int
	var sample string
	rows, err := db.QueryContext(ctx, `SELECT t, rfc3339(t) FROM (SELECT TIMESTAMPTZ '2026-08-01 00:00:00Z' + to_microseconds(i * 7919013) AS t FROM range(20000) r(i))`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tm time.Time
		var got string
		if err := rows.Scan(&tm, &got); err != nil {
			t.Fatal(err)
		}
		if want := format(tm); got != want {
			bad++
			sample = got + " want " + want
		}
	}
	rows.Close()
	if bad > 0 {
		t.Errorf("%d of 20000 times formatted wrongly, e.g. %s", bad, sample)
	}
	for in, want := range map[string]sql.NullString{
		"infinity":  {String: "infinity", Valid: true},
		"-infinity": {String: "-infinity", Valid: true},
	} {
		var got sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT rfc3339(?::TIMESTAMPTZ)", in).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("rfc3339(%s) = %v, want %v", in, got, want)
		}
	}
	var null sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT rfc3339(NULL::TIMESTAMPTZ)").Scan(&null); err != nil || null.Valid {
		t.Errorf("rfc3339(NULL) = %v, %v; want NULL", null, err)
	}
}

// TestOldCaseExposuresSorted: a case of an earlier version (exposures
// stored in any order, no exposures_in_order table) has its exposures in
// exposures.csv's order once it is opened, whatever the number of row
// groups; a case of this version is not sorted again when it is reopened
// (its exposures are stored as analysis_14 inserted them).
func TestOldCaseExposuresSorted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "case.duckdb")
	const n = 300_000 // three row groups
	// Shuffled rows with ties on the trigger's time and id, so that every
	// key of the order decides some pairs.
	insert := `INSERT INTO exposures
SELECT 's' || (hash(i) % 1000), 't' || (i % 7), hash(i * 3) % 100000, i % 5, 'st', 'rt',
       TIMESTAMPTZ '2026-09-01 00:00:00+00', TIMESTAMPTZ '2026-09-01 00:00:00+00' + to_seconds(i % 11),
       'possible', 3, false, 'e' || i
FROM range(` + "300000" + `) r(i) ORDER BY hash(i + 1)`
	order := func(db *sql.DB) (sorted, insertion bool) {
		t.Helper()
		q := `SELECT bool_and(rn = pos), bool_and(rid = pos)
FROM (SELECT row_number() OVER (ORDER BY trigger_ts, trigger_request_id, source_request_id, trigger_row_id, source_row_id) AS rn,
             row_number() OVER () AS pos, row_number() OVER (ORDER BY rowid) AS rid FROM exposures)`
		if err := db.QueryRowContext(ctx, q).Scan(&sorted, &insertion); err != nil {
			t.Fatal(err)
		}
		return sorted, insertion
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{insert, "DROP TABLE exposures_in_order"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if sorted, _ := order(db); sorted {
		t.Fatal("the shuffled exposures are already in order: the test proves nothing")
	}
	db.Close()
	for i, wantSorted := range []bool{true, false} {
		if db, err = Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		var count int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM exposures").Scan(&count); err != nil {
			t.Fatal(err)
		}
		if sorted, insertion := order(db); sorted != wantSorted || !insertion || count != n {
			t.Errorf("open %d: exposures sorted %v (want %v), in rowid order %v, %d rows (want %d)", i+1, sorted, wantSorted, insertion, count, n)
		}
		if i == 0 {
			// Rows a version that keeps the marker stored out of order
			// stay as they are.
			if _, err := db.ExecContext(ctx, "DELETE FROM exposures"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, insert); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
}
