package textmatch_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/textmatch"
)

// TestSharedTenantCounts: the tenants whose prompts of a model hold each
// shingle of text_shared_new, counted on the prompts read again in many
// ranges, equal a count made here prompt by prompt: for shingles of one
// tenant, of a template many tenants' prompts hold, of the other model
// only, repeated inside a prompt, and of no prompt at all.
func TestSharedTenantCounts(t *testing.T) {
	ctx := context.Background()
	defer func(n int64) { *textmatch.HitRows = n }(*textmatch.HitRows)
	*textmatch.HitRows = 7 // ranges cut between rows of one tenant
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	rows := zipfRows(t, db, 400)
	if _, err := textmatch.Update(ctx, db, nil); err != nil {
		t.Fatal(err)
	}

	// The count made here: every shingle of every prompt, per model.
	tenants := map[string]map[uint64]map[string]bool{}
	for _, r := range rows {
		if !r.prompt.Valid {
			continue
		}
		sh, _ := textmatch.Shingles(r.prompt.String, nil, nil)
		for _, h := range sh {
			if tenants[r.model] == nil {
				tenants[r.model] = map[uint64]map[string]bool{}
			}
			if tenants[r.model][h] == nil {
				tenants[r.model][h] = map[string]bool{}
			}
			tenants[r.model][h][r.tenant] = true
		}
	}
	first := func(text string) uint64 {
		sh, _ := textmatch.Shingles(text, nil, nil)
		return sh[0]
	}
	// The shingles asked for: every shingle of m0 held by one tenant or by
	// many, a tenth of m1's, the template's and the repeated phrase's under
	// both models, and one no prompt holds.
	type key struct {
		model string
		hash  uint64
	}
	asked := map[key]bool{{"m0", first(zipfSystem)}: true, {"m1", first(zipfSystem)}: true,
		{"m0", first(zipfRepeated)}: true, {"m1", first(zipfRepeated)}: true, {"m1", 12345}: true}
	for m, hs := range tenants {
		i := 0
		for h := range hs {
			if m == "m0" || i%10 == 0 {
				asked[key{m, h}] = true
				asked[key{"m2", h}] = true // a model no prompt has: 0
			}
			i++
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE text_shared_new (model VARCHAR NOT NULL, hash BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	for k := range asked {
		if _, err := conn.ExecContext(ctx, "INSERT INTO text_shared_new VALUES (?, ?)", k.model, int64(k.hash)); err != nil {
			t.Fatal(err)
		}
	}
	// The count lowers Go's GOGC while it runs, and gives it back.
	defer debug.SetGCPercent(debug.SetGCPercent(140))
	if err := textmatch.CountNewShared(ctx, conn, nil, int64(len(asked))); err != nil {
		t.Fatal(err)
	}
	if gc := debug.SetGCPercent(140); gc != 140 {
		t.Errorf("GOGC after the count: %d, want 140 as before", gc)
	}
	got := map[key]int{}
	res, err := conn.QueryContext(ctx, "SELECT model, hash, tenants FROM text_common_memo")
	if err != nil {
		t.Fatal(err)
	}
	for res.Next() {
		var m string
		var h int64
		var n int
		if err := res.Scan(&m, &h, &n); err != nil {
			t.Fatal(err)
		}
		got[key{m, uint64(h)}] = n
	}
	res.Close()
	if len(got) != len(asked) {
		t.Errorf("%d shingles counted, want %d", len(got), len(asked))
	}
	var many, none int
	for k := range asked {
		want := len(tenants[k.model][k.hash])
		if n, ok := got[k]; !ok || n != want {
			t.Errorf("model %s shingle %d: %d tenants (counted: %v), want %d", k.model, k.hash, n, ok, want)
		}
		if want >= 6 {
			many++
		}
		if want == 0 {
			none++
		}
	}
	if many == 0 || none == 0 || got[key{"m0", first(zipfSystem)}] < 5 || got[key{"m0", first(zipfRepeated)}] != 1 {
		t.Errorf("the case does not test what it should: %d shingles of 6 tenants or more, %d of none; template %d tenants, repeated phrase %d",
			many, none, got[key{"m0", first(zipfSystem)}], got[key{"m0", first(zipfRepeated)}])
	}
	var left bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM duckdb_tables() WHERE table_name = 'text_prompt_hits')").Scan(&left); err != nil || left {
		t.Errorf("the hits table is left after the count (%v)", err)
	}
}

// zipfRow is one request of zipfRows.
type zipfRow struct {
	id             int64
	tenant, model  string
	prompt, answer sql.NullString
}

// zipfRows inserts n requests of twelve tenants and two models into db:
// prompts of Zipf-distributed words (a natural language's profile), a
// system prompt that tenants 0-5 put before theirs, a phrase tenant 7
// repeats; some rows log only a response, some nothing.
func zipfRows(t *testing.T, db *sql.DB, n int64) []zipfRow {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03d", i)
	}
	zipf := func() string {
		return vocab[min(len(vocab)-1, int(float64(len(vocab))*rng.Float64()*rng.Float64()*rng.Float64()))]
	}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = zipf()
		}
		return strings.Join(w, " ")
	}
	var rows []zipfRow
	for id := int64(1); id <= n; id++ {
		tn := int(rng.IntN(12))
		r := zipfRow{id: id << 3, tenant: fmt.Sprintf("t%d", tn), model: fmt.Sprintf("m%d", rng.IntN(2))}
		switch k := rng.IntN(10); {
		case k == 0: // nothing logged
		case k == 1:
			r.answer = sql.NullString{String: words(20), Valid: true}
		default:
			p := words(8 + rng.IntN(40))
			if tn < 6 {
				p = zipfSystem + ". " + p
			}
			if tn == 7 {
				p = zipfRepeated + " " + p + " " + zipfRepeated
			}
			r.prompt = sql.NullString{String: p, Valid: true}
			if k < 5 {
				r.answer = sql.NullString{String: words(15), Valid: true}
			}
		}
		rows = append(rows, r)
		if _, err := db.ExecContext(ctx, `INSERT INTO requests (row_id, request_id, ts, tenant_id, model, prompt_tokens, prompt_text, response_text, row_hash, file_id, line)
VALUES (?, 'r' || ?, TIMESTAMPTZ '2026-09-01 00:00:00+00', ?, ?, 10, ?, ?, ?, 1, ?)`, r.id, r.id, r.tenant, r.model, r.prompt, r.answer, r.id, r.id); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

const (
	zipfSystem   = "You are a careful assistant of the support desk, answer in the language of the question"
	zipfRepeated = "order number seven four two nine was never delivered to us"
)

// TestSpecCounts: the tenants whose prompts of a model hold each response
// fingerprint (text_spec, evidence_11_spec) equal a count made here from
// each prompt's winnowed fingerprints, on rows stored out of row_id order;
// counts under 2 are left out.
func TestSpecCounts(t *testing.T) {
	ctx := context.Background()
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := zipfRows(t, db, 400)
	// Responses that carry prompts' text: the system prompt many tenants
	// use, and the prompt of the row before (another tenant's, often).
	if _, err := db.ExecContext(ctx, `UPDATE requests SET response_text = CASE WHEN row_id % 3 = 0
    THEN ? || ' ' || response_text
    ELSE coalesce((SELECT p.prompt_text FROM requests p WHERE p.row_id = requests.row_id - 8), '') || ' ' || response_text END
WHERE response_text IS NOT NULL`, zipfSystem); err != nil {
		t.Fatal(err)
	}
	// Rows stored out of row_id order: the first 50 moved to the end.
	for _, q := range []string{"CREATE TEMP TABLE moved AS SELECT * FROM requests WHERE row_id <= 400",
		"DELETE FROM requests WHERE row_id <= 400", "INSERT INTO requests SELECT * FROM moved", "DROP TABLE moved"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := textmatch.Update(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	type key struct {
		model string
		hash  int64
	}
	tenants := map[key]map[string]bool{}
	for _, r := range rows {
		if !r.prompt.Valid {
			continue
		}
		sh, _ := textmatch.Shingles(r.prompt.String, nil, nil)
		for _, p := range textmatch.Winnow(sh, nil) {
			k := key{r.model, int64(sh[p])}
			if tenants[k] == nil {
				tenants[k] = map[string]bool{}
			}
			tenants[k][r.tenant] = true
		}
	}
	// read returns the (model, hash, n) rows of query as a map.
	read := func(conn *sql.Conn, query string) map[key]int {
		t.Helper()
		out := map[key]int{}
		res, err := conn.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		for res.Next() {
			var k key
			var n int
			if err := res.Scan(&k.model, &k.hash, &n); err != nil {
				t.Fatal(err)
			}
			out[k] = n
		}
		return out
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"DELETE FROM text_spec_memo", "DELETE FROM text_spec_rows",
		"CREATE OR REPLACE TEMP TABLE text_responses AS SELECT row_id FROM requests WHERE response_text IS NOT NULL"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := textmatch.Prepare(ctx, conn, nil, textmatch.Thresholds{CommonTenants: 3}); err != nil {
		t.Fatal(err)
	}
	spec := read(conn, "SELECT model, hash, tenants FROM text_spec")
	asked := read(conn, "SELECT DISTINCT model, hash, 0 FROM text_resp_fps")
	var many int
	for k := range asked {
		want := len(tenants[k])
		if got, ok := spec[k]; want >= 2 && got != want || want < 2 && ok {
			t.Errorf("model %s fingerprint %d: %d tenants (counted: %v), want %d", k.model, k.hash, got, ok, want)
		}
		if want >= 6 {
			many++
		}
	}
	for k := range spec {
		if _, ok := asked[k]; !ok {
			t.Errorf("model %s fingerprint %d counted, and no response holds it", k.model, k.hash)
		}
	}
	if len(spec) == 0 || many == 0 || len(asked) <= len(spec) {
		t.Errorf("%d counts of %d response fingerprints, %d of 6 tenants or more: the case tests little", len(spec), len(asked), many)
	}
}
