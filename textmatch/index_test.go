package textmatch_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/textmatch"
)

// TestUpdateState: a second update with nothing new skips the row joins and
// changes nothing; a new row, a changed row and a gone row are each found,
// whether the recorded state is there or not, and the fingerprints then
// equal those of a case fingerprinted once.
func TestUpdateState(t *testing.T) {
	ctx := context.Background()
	exec := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const insert = `INSERT INTO requests (row_id, request_id, ts, tenant_id, model, prompt_tokens, prompt_text, response_text, row_hash, file_id, line)
SELECT id, 'r' || id, TIMESTAMPTZ '2026-09-01 00:00:00+00' + to_seconds(id), 't' || (id % 3), 'm', 10, p, r,
       hash(id, p, r), 1, id
FROM (VALUES `
	add := func(db *sql.DB, values string) { exec(db, insert+values+") v(id, p, r)") }
	// update checks that UpToDate says whether anything had to be done.
	update := func(db *sql.DB, upToDate bool) *textmatch.IndexStats {
		t.Helper()
		st, err := textmatch.Update(ctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.UpToDate != upToDate {
			t.Errorf("update: up to date %v, want %v", st.UpToDate, upToDate)
		}
		return st
	}
	count := func(db *sql.DB, q string) (n int64) {
		t.Helper()
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	// Row 6 has a response and no prompt: a response is fingerprinted
	// when it is compared, not in the index.
	const first = `(1, 'the quick brown fox jumps over the lazy dog again', NULL),
	(2, 'a prompt of its own beside the response it was given', 'a response with enough words to hold a shingle or two'),
	(3, NULL, NULL),
	(6, NULL, 'a response alone with enough words to hold a shingle')`
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	add(db, first)
	if st := update(db, false); st.Rows != 2 || st.Stale != 0 {
		t.Fatalf("first update: %d rows, %d stale; want 2, 0", st.Rows, st.Stale)
	}
	if n := count(db, "SELECT count(*) FROM text_index_state"); n != 1 {
		t.Fatalf("text_index_state: %d rows after an update, want 1", n)
	}
	// The memos of tenant counts stay while the fingerprints do, and go
	// when they change.
	memo := func() {
		exec(db, `INSERT INTO text_spec_rows VALUES (1); INSERT INTO text_spec_memo VALUES ('m', 7, 2); INSERT INTO text_common_memo VALUES ('m', 7, 2)`)
	}
	memos := func() int64 {
		return count(db, `SELECT (SELECT count(*) FROM text_spec_rows) + (SELECT count(*) FROM text_spec_memo) + (SELECT count(*) FROM text_common_memo)`)
	}
	memo()
	if st := update(db, true); st.Rows != 0 || st.Stale != 0 {
		t.Errorf("second update: %d rows, %d stale; want 0, 0", st.Rows, st.Stale)
	}
	if n := memos(); n != 3 {
		t.Errorf("an update with nothing new left %d memo rows, want 3", n)
	}

	// A row without text added: nothing to hash, but the state moves on.
	add(db, `(4, NULL, NULL)`)
	if st := update(db, false); st.Rows != 0 || st.Stale != 0 {
		t.Errorf("after a row without text: %d rows, %d stale; want 0, 0", st.Rows, st.Stale)
	}
	if n := memos(); n != 0 {
		t.Errorf("an update after a new row left %d memo rows, want 0", n)
	}
	memo()
	// A new row with text, a changed row (same row_id, other text), a gone row.
	add(db, `(5, 'five words are not enough here but these are more', 'and an answer of several more words too')`)
	exec(db, `UPDATE requests SET prompt_text = 'an other prompt of the first row with some words', row_hash = row_hash + 1 WHERE row_id = 1`)
	exec(db, `DELETE FROM requests WHERE row_id = 2`)
	if st := update(db, false); st.Rows != 2 || st.Stale != 2 {
		t.Errorf("after a new, a changed and a gone row: %d rows, %d stale; want 2, 2", st.Rows, st.Stale)
	}
	// Without the recorded state (a case of an earlier version, or an
	// update cut short) every row is checked again, and nothing is new.
	exec(db, `DELETE FROM text_index_state`)
	memo()
	if st := update(db, false); st.Rows != 0 || st.Stale != 0 {
		t.Errorf("without a recorded state: %d rows, %d stale; want 0, 0", st.Rows, st.Stale)
	}
	if n := memos(); n != 0 {
		t.Errorf("an update without a recorded state left %d memo rows, want 0", n)
	}
	// A change the state sees although the row counts stay: two rows'
	// hashes swapped.
	exec(db, `UPDATE requests SET row_hash = CASE row_id WHEN 1 THEN (SELECT row_hash FROM requests WHERE row_id = 5)
	                                                  ELSE (SELECT row_hash FROM requests WHERE row_id = 1) END WHERE row_id IN (1, 5)`)
	if st := update(db, false); st.Rows != 2 || st.Stale != 2 {
		t.Errorf("after two rows' hashes swapped: %d rows, %d stale; want 2, 2", st.Rows, st.Stale)
	}

	// The same rows fingerprinted at once: the same fingerprints.
	sums := func() []string { return tableSums(t, db, "text_fingerprints", "text_indexed") }
	inc := sums()
	for _, q := range []string{"DELETE FROM text_fingerprints", "DELETE FROM text_indexed", "DELETE FROM text_index_state"} {
		exec(db, q)
	}
	withText := count(db, "SELECT count(*) FROM requests WHERE prompt_text IS NOT NULL")
	if st := update(db, false); st.Rows != withText || withText != 2 {
		t.Errorf("fingerprinting again: %d rows, %d with a prompt, want 2", st.Rows, withText)
	}
	if all := sums(); !slices.Equal(inc, all) {
		t.Errorf("incremental updates left %v, one update %v", inc, all)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// tableSums gives each table's row count and the sum of its rows' hashes,
// to compare two builds of the index; an empty table fails the test, as
// it would compare nothing.
func tableSums(t *testing.T, db *sql.DB, tables ...string) []string {
	t.Helper()
	var out []string
	for _, tbl := range tables {
		var n int64
		var s string
		if err := db.QueryRowContext(context.Background(), "SELECT count(*), coalesce(sum(hash(t)), 0)::VARCHAR FROM "+tbl+" t").Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%s is empty: nothing is compared", tbl)
		}
		out = append(out, tbl+" "+itoa(n)+" "+s)
	}
	return out
}

// TestFingerprintsOfPromptsAndResponses: the index stores each prompt's
// fingerprints (kind 0) and no response's; Prepare hashes the responses
// it compares, a range of rows at a time; both are the fingerprints
// computed text by text, each as often as Winnow keeps it.
func TestFingerprintsOfPromptsAndResponses(t *testing.T) {
	ctx := context.Background()
	defer func(n int64) { *textmatch.ChunkRows = n }(*textmatch.ChunkRows)
	*textmatch.ChunkRows = 10
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// 40 rows with a prompt and a response each (4 chunks of 10), and 5
	// with a response only.
	const rows = 45
	prompt := func(i int) string {
		if i > 40 {
			return ""
		}
		return "please summarise the quarterly figures of unit " + strconv.Itoa(i) + " for the board meeting next week"
	}
	response := func(i int) string {
		return "here is the summary of unit " + strconv.Itoa(i) + " figures that the board asked for last week"
	}
	for i := 1; i <= rows; i++ {
		if _, err := db.ExecContext(ctx, `INSERT INTO requests (row_id, request_id, ts, tenant_id, model, prompt_tokens, prompt_text, response_text, row_hash, file_id, line)
VALUES (?, 'r' || ?, TIMESTAMPTZ '2026-09-01 00:00:00+00', 't', 'm', 10, nullif(?, ''), ?, ?, 1, ?)`, i, i, prompt(i), response(i), i, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := textmatch.Update(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	read := func(conn interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, q string) map[[2]int64]int {
		t.Helper()
		got := map[[2]int64]int{}
		r, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for r.Next() {
			var id, h int64
			if err := r.Scan(&id, &h); err != nil {
				t.Fatal(err)
			}
			got[[2]int64{id, h}]++
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := func(text func(int) string) map[[2]int64]int {
		w := map[[2]int64]int{}
		for i := 1; i <= rows; i++ {
			if text(i) == "" {
				continue
			}
			sh, _ := textmatch.Shingles(text(i), nil, nil)
			for _, p := range textmatch.Winnow(sh, nil) {
				w[[2]int64{int64(i), int64(sh[p])}]++
			}
		}
		return w
	}
	same := func(what string, got, want map[[2]int64]int) {
		t.Helper()
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("%s: %d distinct fingerprints, want %d", what, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: fingerprint %v %d times, want %d", what, k, got[k], n)
			}
		}
	}
	same("prompts", read(db, "SELECT row_id, hash FROM text_fingerprints"), want(prompt))

	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Every response, one of them twice (the sweep's list may repeat one).
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE text_responses AS
SELECT row_id FROM requests UNION ALL SELECT 3`); err != nil {
		t.Fatal(err)
	}
	if err := textmatch.Prepare(ctx, conn, nil, textmatch.Thresholds{CommonTenants: 3}); err != nil {
		t.Fatal(err)
	}
	same("responses", read(conn, "SELECT row_id, hash FROM text_resp_fps"), want(response))
}

// TestOldCaseMigrates: a case fingerprinted by an earlier version (a kind
// column and every response's fingerprints, each fingerprint's position,
// every prompt shingle kept) has its content index forgotten when it is
// opened, in this version's layout, and the next update makes it again as
// a new case's.
func TestOldCaseMigrates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "case.duckdb")
	db, err := casedb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO requests (row_id, request_id, ts, tenant_id, model, prompt_tokens, prompt_text, response_text, row_hash, file_id, line)
VALUES (1, 'r1', TIMESTAMPTZ '2026-09-01 00:00:00+00', 't', 'm', 10, 'the quick brown fox jumps over the lazy dog again', NULL, 1, 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := textmatch.Update(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	index := []string{"text_fingerprints", "text_indexed", "text_index_state", "text_tenant_models"}
	before := tableSums(t, db, index...)
	// The earlier layout, as those versions left it (fingerprints other
	// than this version's, to tell them apart).
	for _, q := range []string{
		"CREATE TEMP TABLE fps AS SELECT * FROM text_fingerprints",
		"DROP TABLE text_fingerprints",
		"CREATE TABLE text_fingerprints (row_id BIGINT NOT NULL, kind UTINYINT NOT NULL, hash BIGINT NOT NULL, pos INTEGER)",
		"INSERT INTO text_fingerprints SELECT row_id, k, hash + k + 1, 0 FROM fps, range(2) r(k)",
		"CREATE TABLE text_prompt_shingles (row_id BIGINT NOT NULL, hash BIGINT NOT NULL)",
		"INSERT INTO text_prompt_shingles SELECT row_id, hash FROM fps",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if db, err = casedb.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var layout string
	var left int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT string_agg(column_name, ',' ORDER BY column_index) FROM duckdb_columns() WHERE table_name = 'text_fingerprints'),
  (SELECT count(*) FROM duckdb_tables() WHERE table_name = 'text_prompt_shingles')
  + (SELECT count(*) FROM text_fingerprints) + (SELECT count(*) FROM text_indexed) + (SELECT count(*) FROM text_index_state)`).Scan(&layout, &left); err != nil {
		t.Fatal(err)
	}
	if layout != "row_id,hash,tm" || left != 0 {
		t.Errorf("after the case is opened: text_fingerprints (%s), want (row_id,hash,tm); %d rows or tables of the earlier index left, want 0", layout, left)
	}
	st, err := textmatch.Update(ctx, db, nil)
	if err != nil || st.UpToDate || st.Rows != 1 {
		t.Errorf("the update after the migration: %+v, %v; want the one prompt fingerprinted again", st, err)
	}
	if after := tableSums(t, db, index...); !slices.Equal(before, after) {
		t.Errorf("the index made again: %v, was %v", after, before)
	}
	if st, err := textmatch.Update(ctx, db, nil); err != nil || !st.UpToDate {
		t.Errorf("the update after that: %+v, %v; want up to date", st, err)
	}
}
