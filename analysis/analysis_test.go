package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
)

// base is t=0 of the hand-built cases; a row's times are seconds after it.
var base = time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)

// req is one hand-built request row. end < 0 means no end_ts; status 0
// means no status logged; an empty decode means unknown.
type req struct {
	id                 string
	ts, end            float64
	tenant, model      string
	prompt, completion int64
	status             int
	prefill, decode    string
	promptText, resp   string
}

func newCase(t *testing.T, rows []req) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	nullStr := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for i, r := range rows {
		var end, status any
		if r.end >= 0 {
			end = base.Add(time.Duration(r.end * float64(time.Second)))
		}
		if r.status != 0 {
			status = r.status
		}
		model := r.model
		if model == "" {
			model = "glm-5.3"
		}
		_, err := db.ExecContext(ctx, `INSERT INTO requests VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,1,$15)`,
			int64(i+1), r.id, base.Add(time.Duration(r.ts*float64(time.Second))), end, r.tenant, model,
			r.prompt, r.completion, status, nullStr(r.prefill), nullStr(r.decode),
			nullStr(r.promptText), nullStr(r.resp), uint64(i+1), int64(i+1))
		if err != nil {
			t.Fatalf("insert %s: %v", r.id, err)
		}
	}
	return db
}

// testIncident writes an incident (and an optional capacity timeline) into
// a temp folder and loads it.
func testIncident(t *testing.T, prefill, decode int64, contamination, timeline string) *incident.Incident {
	t.Helper()
	dir := t.TempDir()
	tl := ""
	if timeline != "" {
		if err := os.WriteFile(filepath.Join(dir, "capacity.csv"), []byte("instance,role,pool_tokens,valid_from\n"+timeline), 0o644); err != nil {
			t.Fatal(err)
		}
		tl = "\n  timeline: capacity.csv"
	}
	y := fmt.Sprintf(`id: WAI-TEST
models: [glm-5.3]
window: {start: 2026-09-01T10:00:00Z, end: 2026-09-01T11:00:00Z}
aware_at: 2026-09-02T10:00:00Z
capacity:
  prefill_pool_tokens: %d
  decode_pool_tokens: %d%s
contamination:
%s
`, prefill, decode, tl, contamination)
	path := filepath.Join(dir, "incident.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return inc
}

func runCase(t *testing.T, db *sql.DB, inc *incident.Incident) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), db, nil, inc)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// exposureLines returns "source>trigger tier self evidence-keys" lines in output order.
func exposureLines(t *testing.T, db *sql.DB, withEvidence bool) []string {
	t.Helper()
	rows, err := db.Query(`SELECT source_request_id, trigger_request_id, tier, self_exposure, evidence FROM exposures
		ORDER BY trigger_ts, trigger_request_id, source_request_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s, tr, tier, ev string
		var self bool
		if err := rows.Scan(&s, &tr, &tier, &self, &ev); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s>%s %s", s, tr, tier)
		if self {
			line += " self"
		}
		if withEvidence {
			line += " " + ev
		}
		out = append(out, line)
	}
	return out
}

// triggers returns "id unknown_slots capacity" for every affected request.
func triggers(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT request_id, coalesce(unknown_slots::VARCHAR, 'NULL'), capacity_tokens FROM affected_requests ORDER BY ts, request_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, unk string
		var capTok int64
		if err := rows.Scan(&id, &unk, &capTok); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s unknown=%s cap=%d", id, unk, capTok))
	}
	return out
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// compact keeps, of each exposure line, the pair, tier, self marker and the
// slots= and text-match (shingles= run= rare=) evidence, for short wants.
func compact(lines []string) []string {
	var out []string
	for _, l := range lines {
		f := strings.Fields(l)
		s := f[0] + " " + f[1]
		for _, kv := range f[2:] {
			if kv == "self" || strings.HasPrefix(kv, "slots=") || strings.HasPrefix(kv, "shingles=") ||
				strings.HasPrefix(kv, "run=") || strings.HasPrefix(kv, "rare=") {
				s += " " + kv
			}
		}
		out = append(out, s)
	}
	return out
}

// The worked trace of DESIGN.md: one decode instance, 12 slots. A at 0-5
// (4 slots), B at 1-3 (4), C at 4-9 (4), trigger T at 6 (7 slots, completion
// 1, so it overwrites 2). The prefill pool is 5, so only T exceeds it.
func TestWorkedTrace(t *testing.T) {
	rows := []req{
		{id: "A", ts: 0, end: 5, tenant: "ta", prompt: 3, completion: 1, decode: "d1"},
		{id: "B", ts: 1, end: 3, tenant: "tb", prompt: 3, completion: 1, decode: "d1"},
		{id: "C", ts: 4, end: 9, tenant: "tc", prompt: 3, completion: 1, decode: "d1"},
		{id: "T", ts: 6, end: 8, tenant: "tt", prompt: 6, completion: 1, decode: "d1"},
	}
	tests := []struct {
		policy      string
		want        []string
		wantUnknown string
	}{
		{"sorted", []string{"A>T probable slots=2", "B>T probable slots=3"}, "T unknown=0 cap=5"},
		{"fifo", []string{"A>T probable slots=3", "B>T probable slots=2"}, "T unknown=0 cap=5"},
		{"lifo", []string{"A>T probable slots=2"}, "T unknown=3 cap=5"},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			db := newCase(t, rows)
			inc := testIncident(t, 5, 12, "  allocator: "+tc.policy, "")
			sum := runCase(t, db, inc)
			equalLines(t, "exposures", compact(exposureLines(t, db, true)), tc.want)
			equalLines(t, "triggers", triggers(t, db), []string{tc.wantUnknown})
			if sum.ReplayedRequests != 4 || sum.ReplayWarnings != 0 || sum.Triggers != 1 {
				t.Errorf("summary %+v", sum)
			}
		})
	}
}

// tenants returns "tenant role tier affected exposed first last" lines.
func tenants(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT tenant_id, role, strongest_tier, affected_requests, exposed_requests,
		coalesce(rfc3339(first_ts), 'NULL'), coalesce(rfc3339(last_ts), 'NULL') FROM tenants ORDER BY tenant_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, role, tier, first, last string
		var aff, exp int64
		if err := rows.Scan(&id, &role, &tier, &aff, &exp, &first, &last); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %s %d %d %s %s", id, role, tier, aff, exp, first, last))
	}
	return out
}

// TestNoTempTablesLeft checks that Run leaves no temporary table behind on
// the pooled connections (they hold millions of rows at scale).
func TestNoTempTablesLeft(t *testing.T) {
	db := newCase(t, []req{{id: "T", ts: 1, end: 2, tenant: "t", prompt: 20, decode: "d1"}})
	db.SetMaxOpenConns(1)
	runCase(t, db, testIncident(t, 10, 100, "  allocator: sorted", ""))
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM duckdb_tables() WHERE temporary`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d temporary tables left after Run", n)
	}
}

// TestEmptyCase: a case with no request analyses to empty outputs (with
// their headers), in both contamination models.
func TestEmptyCase(t *testing.T) {
	for _, model := range []string{"replay", "residency"} {
		db := newCase(t, nil)
		sum := runCase(t, db, testIncident(t, 10, 100, "  model: "+model, ""))
		if sum.Triggers != 0 || sum.ReplayedRequests != 0 || len(exposureLines(t, db, false)) != 0 {
			t.Errorf("%s: summary %+v", model, sum)
		}
		dir := t.TempDir()
		if err := WriteCSV(context.Background(), db, nil, dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "tenants.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), "tenant_id,role,strongest_tier,affected_requests,exposed_requests,first_ts,last_ts\n"; got != want {
			t.Errorf("%s: tenants.csv = %q, want %q", model, got, want)
		}
	}
}
