package textmatch_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/textmatch"
)

// TestUpdateChunksAlike: the pending rows fingerprinted in many chunks (each
// built from the hashing workers' own slices) leave the
// same fingerprints, indexed rows and counts as one chunk, also on a
// pool held to one connection (no second one to insert on);
// a cancelled update returns an error and records no state.
func TestUpdateChunksAlike(t *testing.T) {
	ctx := context.Background()
	build := func(rows int64, oneConn bool) (*textmatch.IndexStats, []string, *sql.DB) {
		t.Helper()
		old := *textmatch.ChunkRows
		*textmatch.ChunkRows = rows
		defer func() { *textmatch.ChunkRows = old }()
		db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if oneConn {
			db.SetMaxOpenConns(1)
		}
		// 300 rows: prompts and responses of 8-40 words from a small
		// vocabulary (shingles repeat across rows), some without text;
		// the 240 prompts are fingerprinted. Tenants t0-t6 of models m0
		// and m1.
		if _, err := db.ExecContext(ctx, `INSERT INTO requests (row_id, request_id, ts, tenant_id, model, prompt_tokens, prompt_text, response_text, row_hash, file_id, line)
SELECT id, 'r' || id, TIMESTAMPTZ '2026-09-01 00:00:00+00' + to_seconds(id), 't' || (id % 7), 'm' || (id % 2), 10, p, r, hash(id, p, r), 1, id
FROM (SELECT id,
             CASE WHEN id % 5 = 0 THEN NULL ELSE (SELECT string_agg('w' || ((id * 31 + k * k) % 23), ' ') FROM range(8 + id % 33) t(k)) END AS p,
             CASE WHEN id % 3 = 0 THEN NULL ELSE (SELECT string_agg('v' || ((id * 17 + k * 7) % 19), ' ') FROM range(6 + id % 29) t(k)) END AS r
      FROM range(1, 301) t(id))`); err != nil {
			t.Fatal(err)
		}
		uctx, cancel := context.WithTimeout(ctx, time.Minute) // a wait for a second connection would hang
		defer cancel()
		st, err := textmatch.Update(uctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st, tableSums(t, db, indexTables...), db
	}
	one, oneSums, _ := build(1<<30, false)
	lone, loneSums, _ := build(7, true)
	if lone.Rows != one.Rows || lone.Fingerprints != one.Fingerprints || !slices.Equal(loneSums, oneSums) {
		t.Errorf("in chunks of 7 on one connection: %+v %v; in one chunk: %+v %v", lone, loneSums, one, oneSums)
	}
	many, manySums, db := build(7, false)
	if one.Rows != 240 || many.Rows != one.Rows || many.Fingerprints != one.Fingerprints {
		t.Errorf("in chunks of 7: %+v; in one chunk: %+v (240 rows with a prompt)", many, one)
	}
	if !slices.Equal(oneSums, manySums) {
		t.Errorf("in chunks of 7: %v; in one chunk: %v", manySums, oneSums)
	}
	// And each row's as the exported functions make them: the winnowed
	// fingerprints, each as often as it is kept, with the number of the
	// row's (model, tenant): the 14 pairs in (model, tenant_id) order from
	// 1.
	var wantFP, gotFP []string
	rows, err := db.QueryContext(ctx, "SELECT row_id, prompt_text FROM requests")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var text sql.NullString
		if err := rows.Scan(&id, &text); err != nil {
			t.Fatal(err)
		}
		if !text.Valid {
			continue
		}
		tm := (id%2)*7 + id%7 + 1
		sh, _ := textmatch.Shingles(text.String, nil, nil)
		for _, p := range textmatch.Winnow(sh, nil) {
			wantFP = append(wantFP, fmt.Sprint(id, int64(sh[p]), tm))
		}
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT row_id, hash, tm FROM text_fingerprints")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, h, tm int64
		if err := rows.Scan(&id, &h, &tm); err != nil {
			t.Fatal(err)
		}
		gotFP = append(gotFP, fmt.Sprint(id, h, tm))
	}
	rows.Close()
	slices.Sort(wantFP)
	slices.Sort(gotFP)
	if len(wantFP) == 0 || !slices.Equal(gotFP, wantFP) {
		t.Errorf("fingerprints %d, want %d (or they differ)", len(gotFP), len(wantFP))
	}

	// Cancelled after the first chunk is inserted: an error, no state
	// recorded, and the next update completes the fingerprints as one
	// chunk leaves them.
	*textmatch.ChunkRows = 7
	defer func() { *textmatch.ChunkRows = 100_000 }()
	if _, err := db.ExecContext(ctx, "DELETE FROM text_fingerprints; DELETE FROM text_indexed; DELETE FROM text_index_state"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := slog.New(cancelOnChunk{cancel})
	if _, err := textmatch.Update(cctx, db, logger); err == nil {
		t.Fatal("an update cancelled after its first chunk: no error")
	}
	var state, indexed int64
	if err := db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM text_index_state), (SELECT count(*) FROM text_indexed)").Scan(&state, &indexed); err != nil {
		t.Fatal(err)
	}
	if state != 0 || indexed == 0 || indexed >= 240 {
		t.Errorf("a cancelled update left %d state rows and %d indexed rows; want 0 and some of 240", state, indexed)
	}
	st, err := textmatch.Update(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 240-indexed {
		t.Errorf("after the cancelled update: %d rows fingerprinted, want %d", st.Rows, 240-indexed)
	}
	again := tableSums(t, db, indexTables...)
	if !slices.Equal(oneSums, again) {
		t.Errorf("after a cancelled update and another: %v; in one chunk: %v", again, oneSums)
	}
}

// cancelOnChunk cancels the update once its first chunk is inserted.
type cancelOnChunk struct{ cancel context.CancelFunc }

func (h cancelOnChunk) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOnChunk) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "step" && a.Value.String() == "fingerprinted chunk" {
			h.cancel()
		}
		return true
	})
	return nil
}
func (h cancelOnChunk) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h cancelOnChunk) WithGroup(string) slog.Handler      { return h }

// indexTables: every table an update writes.
var indexTables = []string{"text_fingerprints", "text_indexed", "text_index_state", "text_tenant_models"}
