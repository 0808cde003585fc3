package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/ingest"
)

// srec is one source record as a real-layout reader writes it; ts and end
// are seconds after base (end < 0: none); empty strings and zero numbers
// are NULL, except prompt and completion (-1: NULL).
type srec struct {
	role, rid              string
	room                   int64
	instance               string
	ts, end                float64
	tenant, model          string
	prompt, completion     int64
	status                 int64
	finish, message, texts string
}

const cutMessage = "Input length (900000 tokens) exceeds the maximum allowed length (681279 tokens). Use a shorter input or enable --allow-auto-truncate."

// A call as the three real logs hold it: the gateway's record (its id is
// the decode rid, as LiteLLM's), the prefill's (own rid, the same room; cut
// to one token when cut) and the decode's (the full prompt, a normal finish).
func gw(id string, ts float64, tenant string, prompt, completion, status int64) srec {
	return srec{role: "gateway", rid: id, ts: ts, end: ts + 4, tenant: tenant, model: "glm-5.3", prompt: prompt, completion: completion, status: status}
}

func pf(rid string, room int64, ts float64, prompt int64) srec {
	r := srec{role: "prefill", rid: rid, room: room, instance: "p1", ts: ts, end: ts + 0.5, model: "glm-5.3", prompt: prompt, completion: 1, finish: "length"}
	if prompt == 1 {
		r.status, r.finish, r.message = 400, "abort", cutMessage
	}
	return r
}

func dc(rid string, room int64, ts float64, prompt, completion int64) srec {
	return srec{role: "decode", rid: rid, room: room, instance: "d1", ts: ts + 0.2, end: ts + 3, model: "glm-5.3", prompt: prompt, completion: completion, finish: "stop"}
}

// joinedCase loads the records into source_records of a new case and joins them.
func joinedCase(t *testing.T, recs []srec) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	num := func(n int64, null int64) any {
		if n == null {
			return nil
		}
		return n
	}
	at := func(s float64) any {
		if s < 0 {
			return nil
		}
		return base.Add(time.Duration(s * float64(time.Second)))
	}
	files := map[string]int64{"gateway": 1, "prefill": 2, "decode": 3}
	for i, r := range recs {
		file, line := files[r.role], int64(i+1)
		_, err := db.ExecContext(ctx, `INSERT INTO source_records VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9, $10, $11,
			$12, $13, NULL, $14, $15, $16, $17, NULL, hash($1), $18, $19)`,
			file<<32|line, "sources["+fmt.Sprint(file)+"]", "test", r.role, str(r.rid), num(r.room, 0), str(r.instance),
			at(r.ts), at(r.end), str(r.tenant), str(r.model), num(r.prompt, -1), num(r.completion, -1), num(r.status, 0),
			str(r.finish), str(r.message), str(r.texts), file, line)
		if err != nil {
			t.Fatalf("insert %+v: %v", r, err)
		}
	}
	if _, err := ingest.Join(ctx, db, nil, ingest.JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// affectedEvidence returns "request_id tenant evidence" per affected request, in output order.
func affectedEvidence(t *testing.T, db *sql.DB, dir string) []string {
	t.Helper()
	return csvLines(t, filepath.Join(dir, "affected_requests.csv"), func(f []string) string {
		return strings.Join([]string{f[0], f[1], f[len(f)-1]}, " ")
	})
}

func csvLines(t *testing.T, path string, pick func([]string) string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		out = append(out, pick(strings.Split(l, ",")))
	}
	return out
}

// TestOneAffectedRequestPerCall: one over-long call whose prompt the prefill
// cut gives exactly one affected request whatever sources are loaded, with
// the evidence the loaded records support.
func TestOneAffectedRequestPerCall(t *testing.T) {
	g := gw("chatcmpl-d1", 100, "team-a", 900000, 30, 200)
	p := pf("chatcmpl-p1", 51122093, 100, 1)
	d := dc("chatcmpl-d1", 51122093, 100, 900000, 30)
	tests := []struct {
		name string
		recs []srec
		want []string
	}{
		{"gateway, prefill and decode", []srec{g, p, d}, []string{"chatcmpl-d1 team-a over_capacity cut_at_prefill"}},
		{"gateway and decode", []srec{g, d}, []string{"chatcmpl-d1 team-a over_capacity"}},
		{"gateway and prefill (lost decode)", []srec{g, p}, []string{"chatcmpl-d1 team-a over_capacity cut_at_prefill"}},
		{"prefill and decode (no gateway: unattributed)", []srec{p, d}, []string{"chatcmpl-d1  over_capacity cut_at_prefill"}},
		{"gateway alone", []srec{g}, []string{"chatcmpl-d1 team-a over_capacity"}},
		{"decode alone", []srec{d}, []string{"chatcmpl-d1  over_capacity"}},
		{"prefill alone (the 400 it logged was not served)", []srec{p}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := joinedCase(t, tc.recs)
			inc := testIncident(t, 681280, 3200000, "  allocator: sorted", "")
			sum := runCase(t, db, inc)
			dir := t.TempDir()
			if err := WriteCSV(context.Background(), db, nil, dir); err != nil {
				t.Fatal(err)
			}
			equalLines(t, "affected", affectedEvidence(t, db, dir), tc.want)
			if sum.Triggers != len(tc.want) {
				t.Errorf("summary: %d triggers, want %d", sum.Triggers, len(tc.want))
			}
			for _, l := range tenants(t, db) {
				if strings.HasPrefix(l, " ") {
					t.Errorf("tenants lists the unattributed tenant '': %q", l)
				}
			}
		})
	}
}

// TestTwoTriggerTests: the cut makes an in-scope call a trigger even where
// the capacity timeline says otherwise, a cut call out of scope is no
// trigger but listed, and every disagreement is listed with why.
func TestTwoTriggerTests(t *testing.T) {
	recs := []srec{
		// A: cut, but the incident's pool (1,000,000) says 900,000 fits: a trigger by the cut alone.
		gw("A", 10, "team-a", 900000, 20, 200), pf("pA", 1, 10, 1), dc("A", 1, 10, 900000, 20),
		// B: over the pool and cut: both tests agree.
		gw("B", 20, "team-b", 1200000, 20, 200), pf("pB", 2, 20, 1), dc("B", 2, 20, 1200000, 20),
		// C: over the pool, but its prefill read the whole prompt: a trigger, listed.
		gw("C", 30, "team-c", 1100000, 20, 200), pf("pC", 3, 30, 1100000), dc("C", 3, 30, 1100000, 20),
		// D: cut, on a model the incident does not list: no trigger, listed.
		{role: "gateway", rid: "D", ts: 40, end: 44, tenant: "team-d", model: "other", prompt: 900000, completion: 5, status: 200},
		{role: "prefill", rid: "pD", room: 4, instance: "p9", ts: 40, end: 40.5, model: "other", prompt: 1, completion: 1, status: 400, finish: "abort", message: cutMessage},
		{role: "decode", rid: "D", room: 4, instance: "d9", ts: 40.2, end: 43, model: "other", prompt: 900000, completion: 5, finish: "stop"},
		// E: cut, after the window: no trigger, listed.
		gw("E", 4000, "team-e", 900000, 20, 200), pf("pE", 5, 4000, 1), dc("E", 5, 4000, 900000, 20),
		// F: cut but the customer got a 400: not served, so no fingerprint of the bug.
		gw("F", 50, "team-f", 900000, 0, 400), pf("pF", 6, 50, 1),
		// G: over the pool on a canonical-like call with no prefill record: no disagreement to list.
		gw("G", 60, "team-g", 1300000, 20, 200), dc("G", 7, 60, 1300000, 20),
	}
	db := joinedCase(t, recs)
	inc := testIncident(t, 1000000, 32000000, "  allocator: sorted", "")
	sum := runCase(t, db, inc)
	dir := t.TempDir()
	if err := WriteCSV(context.Background(), db, nil, dir); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "affected", affectedEvidence(t, db, dir), []string{
		"A team-a cut_at_prefill", "B team-b over_capacity cut_at_prefill", "C team-c over_capacity", "G team-g over_capacity"})
	b, err := os.ReadFile(filepath.Join(dir, "trigger_disagreements.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := `request_id,over_capacity,cut_at_prefill,reason
A,false,true,cut at prefill within the capacity in force (900000 <= 1000000 tokens): a trigger; the capacity timeline may be wrong
C,true,false,"over capacity, but its prefill record did not cut the prompt"
D,false,true,cut at prefill outside the scope (model not listed): no trigger; the window or the model list may be wrong
E,false,true,cut at prefill outside the scope (outside the window): no trigger; the window or the model list may be wrong
`
	if string(b) != want {
		t.Errorf("trigger_disagreements.csv:\n%s\nwant:\n%s", b, want)
	}
	if sum.CutTriggers != 2 || sum.Disagreements != 4 || sum.Triggers != 4 {
		t.Errorf("summary: cut %d, disagreements %d, triggers %d; want 2, 4, 4", sum.CutTriggers, sum.Disagreements, sum.Triggers)
	}
}

// TestUnattributedAndHeldSlots: an engine record no gateway record claims
// is a source whose owner is unknown (never self, never a tenant); a decode
// record that finished normally held its slots although the gateway said 500.
func TestUnattributedAndHeldSlots(t *testing.T) {
	recs := []srec{
		// U: decode and prefill, no gateway record: unattributed, before the trigger on d1.
		pf("pU", 1, 1, 400000), dc("dU", 1, 1, 400000, 100),
		// H: the gateway says 500, the decode finished normally: it held its slots.
		gw("H", 2, "team-h", 300000, 50, 500), pf("pH", 2, 2, 300000), dc("H", 2, 2, 300000, 50),
		// T: the trigger; it gets the slots U and H freed.
		gw("T", 10, "team-t", 900000, 10, 200), pf("pT", 3, 10, 1), dc("T", 3, 10, 900000, 10),
		// X: an unattributed trigger later; it overwrites fewer slots than T did, so it reads T too.
		pf("pX", 4, 20, 1), dc("dX", 4, 20, 900000, 5),
	}
	db := joinedCase(t, recs)
	inc := testIncident(t, 681280, 1000000, "  allocator: sorted", "")
	sum := runCase(t, db, inc)
	got := exposureLines(t, db, false)
	slices.Sort(got)
	equalLines(t, "exposures", got, []string{"H>T probable", "H>dX probable", "T>dX probable", "dU>T probable", "dU>dX probable"})
	rows, err := db.Query(`SELECT source_request_id, recipient_tenant_id, source_tenant_id, self_exposure FROM exposures WHERE source_tenant_id = '' OR recipient_tenant_id = '' ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s, rt, st string
		var self bool
		if err := rows.Scan(&s, &rt, &st, &self); err != nil {
			t.Fatal(err)
		}
		if self {
			t.Errorf("%s (tenant %q) -> recipient %q marked self-exposure", s, st, rt)
		}
	}
	equalLines(t, "tenants", tenants(t, db), []string{
		"team-h source probable 0 1 2026-09-01T10:00:02.200000Z 2026-09-01T10:00:02.200000Z",
		"team-t both probable 1 1 2026-09-01T10:00:10.200000Z 2026-09-01T10:00:10.200000Z",
	})
	if sum.UnattributedTriggers != 1 || sum.UnattributedSources != 1 {
		t.Errorf("unattributed: %d triggers, %d sources; want 1, 1", sum.UnattributedTriggers, sum.UnattributedSources)
	}
}
