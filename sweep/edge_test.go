package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
)

// TestCommonTenantsEdge: a shingle inside a copied run carries no weight once
// the prompts of common_tenants distinct tenants of the model hold it,
// counted shingle by shingle over the whole case (its neighbours keep
// theirs). The copy is 12 words; the phrase is the copy's 4th shingle, so
// without it the longest run left is 8 words: weak.
func TestCommonTenantsEdge(t *testing.T) {
	words := func(tag string, n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("%s%d", tag, i)
		}
		return w
	}
	j := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return strings.Join(all, " ")
	}
	secret := words("sec", 40)
	copied := secret[10:22]
	phrase := copied[3 : 3+5]
	type holder struct {
		tenant, model string
	}
	for _, tc := range []struct {
		name    string
		holders []holder // prompts that hold the phrase, besides the source's
		strong  bool
	}{
		{"source and one other tenant hold it", []holder{{"t-h1", "m"}}, true},
		{"one other tenant, many prompts", []holder{{"t-h1", "m"}, {"t-h1", "m"}, {"t-h1", "m"}}, true},
		{"a third tenant, another model", []holder{{"t-h1", "m"}, {"t-h2", "other"}}, true},
		{"three tenants of the model hold it", []holder{{"t-h1", "m"}, {"t-h2", "m"}}, false},
		{"the recipient itself is the third", []holder{{"t-h1", "m"}, {"t-rcp", "m"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			base := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
			n := 0
			add := func(tenant, model string, at time.Duration, prompt, response string) {
				n++
				var pr, rs any
				if prompt != "" {
					pr = prompt
				}
				if response != "" {
					rs = response
				}
				if _, err := db.ExecContext(ctx, `INSERT INTO requests (row_id, request_id, ts, end_ts, tenant_id, model,
					prompt_tokens, completion_tokens, status, prompt_text, response_text, row_hash, file_id, line)
					VALUES (?, ?, ?, ?, ?, ?, 100, 10, 200, ?, ?, ?, 1, ?)`,
					n, fmt.Sprintf("req-%d", n), base.Add(at), base.Add(at+time.Second), tenant, model, pr, rs, n, n); err != nil {
					t.Fatal(err)
				}
			}
			add("t-src", "m", 0, j(secret), "")
			for i, h := range tc.holders {
				add(h.tenant, h.model, time.Duration(i+1)*time.Minute,
					j(words(fmt.Sprintf("pre%d_", i), 6), phrase, words(fmt.Sprintf("post%d_", i), 6)), "")
			}
			add("t-rcp", "m", time.Hour, j(words("ask", 20)), j(words("fill", 5), copied, words("tail", 5)))
			sum, err := Run(ctx, db, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var rare, run int
			err = db.QueryRowContext(ctx, `SELECT rare, run FROM sweep_matches`).Scan(&rare, &run)
			if got := err == nil; got != tc.strong {
				t.Fatalf("strong match %v (%v), want %v; weakest figures rare=%d run=%d", got, err, tc.strong, sum.WeakRare, sum.WeakRun)
			}
			if tc.strong && (rare != 8 || run != 12) {
				t.Errorf("rare=%d run=%d, want 8 and 12 (the phrase carries weight)", rare, run)
			}
			if !tc.strong && (sum.WeakRare != 7 || sum.WeakRun != 8) {
				t.Errorf("weak match rare=%d run=%d, want 7 and 8 (only the phrase's shingle lost)", sum.WeakRare, sum.WeakRun)
			}
		})
	}
}
