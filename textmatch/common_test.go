package textmatch_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
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

	// Prompts of Zipf-distributed words (a natural language's profile), a
	// system prompt that tenants 0-5 put before theirs, a phrase one
	// tenant repeats; some rows log only a response, some nothing.
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
	const system = "You are a careful assistant of the support desk, answer in the language of the question"
	const repeated = "order number seven four two nine was never delivered to us"
	type row struct {
		id             int64
		tenant, model  string
		prompt, answer sql.NullString
	}
	var rows []row
	for id := int64(1); id <= 400; id++ {
		tn := int(rng.IntN(12))
		r := row{id: id << 3, tenant: fmt.Sprintf("t%d", tn), model: fmt.Sprintf("m%d", rng.IntN(2))}
		switch k := rng.IntN(10); {
		case k == 0: // nothing logged
		case k == 1:
			r.answer = sql.NullString{String: words(20), Valid: true}
		default:
			p := words(8 + rng.IntN(40))
			if tn < 6 {
				p = system + ". " + p
			}
			if tn == 7 {
				p = repeated + " " + p + " " + repeated
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
	asked := map[key]bool{{"m0", first(system)}: true, {"m1", first(system)}: true,
		{"m0", first(repeated)}: true, {"m1", first(repeated)}: true, {"m1", 12345}: true}
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
	if err := textmatch.CountNewShared(ctx, conn, nil, int64(len(asked))); err != nil {
		t.Fatal(err)
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
	if many == 0 || none == 0 || got[key{"m0", first(system)}] < 5 || got[key{"m0", first(repeated)}] != 1 {
		t.Errorf("the case does not test what it should: %d shingles of 6 tenants or more, %d of none; template %d tenants, repeated phrase %d",
			many, none, got[key{"m0", first(system)}], got[key{"m0", first(repeated)}])
	}
	var left bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM duckdb_tables() WHERE table_name = 'text_prompt_hits')").Scan(&left); err != nil || left {
		t.Errorf("the hits table is left after the count (%v)", err)
	}
}
