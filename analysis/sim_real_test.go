package analysis

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/internal/csvtest"
	"github.com/leakmap/leakmap/simulate"
)

// realSources is the incident file's sources as ingest reads them.
func realSources(t *testing.T, inc *incident.Incident) []ingest.Source {
	t.Helper()
	if len(inc.Sources) < 3 {
		t.Fatalf("%s: %d sources", inc.Path, len(inc.Sources))
	}
	var out []ingest.Source
	for _, s := range inc.Sources {
		out = append(out, ingest.Source{Paths: s.Paths, Layout: s.Layout, Mapping: s.Mapping, Keys: ingest.SourceKeys{
			Role: s.Role, Model: s.Model, Timezone: s.Timezone, TenantField: s.TenantField, Tenant: s.Tenant, Label: s.Label}})
	}
	return out
}

// analyse runs the analysis of db for the incident into out.
func analyse(t *testing.T, db *sql.DB, inc *incident.Incident, out string) {
	t.Helper()
	ctx := context.Background()
	if _, err := Run(ctx, db, nil, inc); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(ctx, db, nil, out); err != nil {
		t.Fatal(err)
	}
}

// TestRealLayoutsAgainstSimulation runs, for every allocator, the same
// noisy simulated incident twice: from the canonical logs, and from the real
// layouts (the proxy's spend logs and the engines' prefill and decode
// request logs, joined into one request per call). Both must meet the
// truth the same way: the same affected requests and recipients (exactly
// the truth's, each call once: no double count from the gateway and decode
// records), the same confirmed exposures, the resident exposures covered;
// and the join report must count what the simulator planted.
func TestRealLayoutsAgainstSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation end to end")
	}
	for _, policy := range []string{incident.AllocSorted, incident.AllocFIFO, incident.AllocLIFO} {
		t.Run(policy, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := simulate.DefaultConfig()
			cfg.Requests, cfg.Allocator = 6000, policy
			sum, err := simulate.Generate(ctx, nil, dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			truth := filepath.Join(dir, "truth")

			canon, err := casedb.Open(ctx, filepath.Join(dir, "canonical.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer canon.Close()
			if _, err := ingest.Run(ctx, canon, nil, []string{filepath.Join(dir, "logs")}, ingest.Options{}); err != nil {
				t.Fatal(err)
			}
			outC := filepath.Join(dir, "out-canonical")
			analyse(t, canon, inc, outC)

			real, err := casedb.Open(ctx, filepath.Join(dir, "real.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer real.Close()
			incR, err := incident.Load(filepath.Join(dir, "incident-real.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := ingest.RunSources(ctx, real, nil, realSources(t, incR), ingest.Options{Join: ingest.JoinOptions{
				RoomTolerance: incR.Join.RoomTolerance, GatewayTolerance: incR.Join.GatewayTolerance}})
			onlyTornLine(t, err)
			damaged := 0
			for _, f := range res.Files {
				if f.Damage != "" {
					damaged++
				}
			}
			if damaged != sum.Real.TornLines || err == nil {
				t.Errorf("%d damaged files (err %v), the simulator tore %d lines", damaged, err, sum.Real.TornLines)
			}
			outR := filepath.Join(dir, "out-real")
			analyse(t, real, incR, outR)

			t.Run("truth", func(t *testing.T) { checkAgainstTruth(t, truth, outR, true) })

			// The same numbers as the same incident written canonically.
			aC := csvtest.Read(t, filepath.Join(outC, "affected_requests.csv"))
			aR := csvtest.Read(t, filepath.Join(outR, "affected_requests.csv"))
			equalLines(t, "affected requests, real vs canonical", csvtest.Column(aR, "request_id"), csvtest.Column(aC, "request_id"))
			equalLines(t, "recipient tenants, real vs canonical", sortedKeys(set(csvtest.Column(aR, "tenant_id"))),
				sortedKeys(set(csvtest.Column(aC, "tenant_id"))))
			confirmed := func(out string) []string {
				var c []string
				for _, r := range csvtest.Read(t, filepath.Join(out, "exposures.csv")) {
					if r["tier"] == TierConfirmed {
						c = append(c, r["source_request_id"]+">"+r["trigger_request_id"])
					}
				}
				return c
			}
			equalLines(t, "confirmed exposures, real vs canonical", confirmed(outR), confirmed(outC))

			// The bug's fingerprint: a trigger whose cut prefill record
			// was kept is marked cut_at_prefill, joined through its decode
			// record's room, or (its decode record lost) to the proxy row by
			// the length its abort message gives; one whose prefill record
			// was lost is over capacity only.
			cut := map[string]bool{}
			for _, c := range csvtest.Read(t, filepath.Join(truth, "real_calls.csv")) {
				cut[c["request_id"]] = c["cut_at_prefill"] == "true"
			}
			for _, r := range aR {
				if want := cut[r["request_id"]]; strings.Contains(r["evidence"], "cut_at_prefill") != want {
					t.Errorf("%s: evidence %q, prefill record cut the prompt %t", r["request_id"], r["evidence"], want)
				}
			}

			checkJoinReport(t, real, res, sum, truth)
			if t.Failed() {
				keep := filepath.Join(os.TempDir(), "sim-real-"+policy)
				os.RemoveAll(keep)
				os.Rename(dir, keep)
				t.Logf("case kept in %s", keep)
			}
		})
	}
}

// checkJoinReport asserts the join's counts against the calls and the
// noise the simulator planted (truth/real_calls.csv, real_noise.csv).
func checkJoinReport(t *testing.T, db *sql.DB, res *ingest.Result, sum *simulate.Summary, truth string) {
	t.Helper()
	rs := sum.Real
	if res.Rejected != int64(rs.TornLines) || rs.TornLines != 1 {
		t.Errorf("rejected %d records, the simulator tore %d lines", res.Rejected, rs.TornLines)
	}
	// Copies of a proxy row are duplicates at ingest, before the join.
	var gwDups int64
	for _, f := range res.Files {
		if f.Role == "gateway" {
			gwDups += f.Duplicates
		} else if f.Duplicates != 0 {
			t.Errorf("%s: %d duplicates, the simulator planted none in engine logs", f.Path, f.Duplicates)
		}
	}
	if gwDups != int64(rs.GatewayDuplicates) {
		t.Errorf("gateway duplicates: ingest counted %d, the simulator planted %d", gwDups, rs.GatewayDuplicates)
	}
	var servedBoth, servedEngine, failedDecode, failedBoth, lostDecodeOnly, lostPrefillOnly int64
	for _, c := range csvtest.Read(t, filepath.Join(truth, "real_calls.csv")) {
		served := strings.HasPrefix(c["request_id"], "chatcmpl-") // a served call's gateway id is its decode rid
		p, d := c["prefill_rid"] != "", c["decode_rid"] != ""
		switch {
		case served && p && d:
			servedBoth++
		case p && !d:
			lostDecodeOnly++
		case d && !p:
			lostPrefillOnly++
		}
		if served && (d || p) {
			servedEngine++ // by the decode rid, else the prefill record's time and size (a cut one's abort message gives the length)
		}
		if !served && d {
			// A failure: the proxy logged its own id and 0 tokens, the
			// decode record aborted with the status the customer got.
			failedDecode++
			if p {
				failedBoth++
			}
		}
	}
	rows, err := db.Query(`SELECT role, outcome, reason, sum(records) FROM join_report GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int64{}
	for rows.Next() {
		var role, outcome, reason string
		var n int64
		if err := rows.Scan(&role, &outcome, &reason, &n); err != nil {
			t.Fatal(err)
		}
		t.Logf("join_report %s %s %q %d", role, outcome, reason, n)
		got[role] += n
		got[role+" "+outcome] += n
		if reason != "duplicate" {
			got[role+" distinct"] += n
			got[role+" "+outcome+" distinct"] += n
		}
		if outcome == "unmatched" && strings.Contains(reason, "no decode record") {
			got[role+" no decode record"] += n
		}
		if outcome == "unmatched" && strings.Contains(reason, "no prefill record") {
			got[role+" no prefill record"] += n
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		want int64
	}{
		{"gateway", int64(rs.GatewayRows)},
		{"gateway matched", servedEngine + failedDecode},
		// A request whose events fell into two hourly parts is one record.
		{"prefill matched distinct", servedBoth + failedBoth},
		{"decode matched distinct", servedBoth + failedBoth},
		{"prefill distinct", int64(rs.PrefillRecords)},
		{"decode distinct", int64(rs.DecodeRecords)},
		{"prefill no decode record", lostDecodeOnly},
		{"decode no prefill record", lostPrefillOnly},
		{"gateway ambiguous", 0}, {"prefill ambiguous", 0}, {"decode ambiguous", 0}, // rooms repeat only weeks apart
	} {
		if got[c.key] != c.want {
			t.Errorf("join_report %s: %d records, want %d", c.key, got[c.key], c.want)
		}
	}
	if rs.LostPrefill == 0 || rs.LostDecode == 0 || rs.GatewayDuplicates == 0 || rs.RoomRepeats == 0 {
		t.Errorf("the simulation planted too little noise to test: %+v", rs)
	}
	if failedDecode == 0 {
		t.Error("no failed call reached an engine: the failure join is not tested")
	}
}

// TestRealLayoutsOneRequestPerCall loads the same real-layout incident
// with several subsets of its sources: whatever is loaded, an over-long call
// is one affected request (the gateway row and the engine records of a
// call are never counted twice), and every trigger of the truth is found.
func TestRealLayoutsOneRequestPerCall(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation end to end")
	}
	ctx := context.Background()
	dir := t.TempDir()
	cfg := simulate.DefaultConfig()
	cfg.Requests = 3000
	if _, err := simulate.Generate(ctx, nil, dir, cfg); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(filepath.Join(dir, "incident-real.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	truth := csvtest.ReadColumn(t, filepath.Join(dir, "truth", "affected_requests.csv"), "request_id")
	decodeLost := map[string]bool{}
	for _, c := range csvtest.Read(t, filepath.Join(dir, "truth", "real_calls.csv")) {
		decodeLost[c["request_id"]] = c["decode_rid"] == ""
	}
	edges := map[string]string{}
	for _, e := range csvtest.Read(t, filepath.Join(dir, "truth", "edge_cases.csv")) {
		edges[e["request_id"]] = e["name"]
	}
	all := realSources(t, inc)
	pick := func(roles ...string) []ingest.Source {
		var out []ingest.Source
		for _, s := range all {
			if slices.Contains(roles, s.Keys.Role) {
				out = append(out, s)
			}
		}
		return out
	}
	// A subset can miss a trigger only for want of the record that shows
	// it: without the proxy, a call whose decode record was lost (its cut
	// prefill record says 1 token); with the proxy alone, the call at the
	// very start of the window (the proxy saw it a few milliseconds before).
	noGateway := func(id string) bool { return decodeLost[id] }
	gatewayOnly := func(id string) bool { return edges[id] == "window-start" }
	for _, tc := range []struct {
		name    string
		srcs    []ingest.Source
		exact   bool // every record of a call is there to place it: the truth exactly
		mayMiss func(string) bool
	}{
		{"gateway+prefill+decode", all, true, nil},
		{"gateway+decode", pick("gateway", "decode"), false, nil},
		{"prefill+decode", pick("prefill", "decode"), false, noGateway},
		{"gateway", pick("gateway"), false, gatewayOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			_, err = ingest.RunSources(ctx, db, nil, tc.srcs, ingest.Options{})
			onlyTornLine(t, err)
			out := t.TempDir()
			analyse(t, db, inc, out)
			got := csvtest.ReadColumn(t, filepath.Join(out, "affected_requests.csv"), "request_id")
			count := map[string]int{}
			for _, id := range got {
				count[id]++
				if count[id] > 1 {
					t.Errorf("%s is %d affected requests", id, count[id])
				}
			}
			for _, id := range truth {
				if count[id] == 0 && tc.mayMiss != nil && tc.mayMiss(id) {
					continue
				}
				if count[id] != 1 {
					t.Errorf("trigger %s is %d affected requests, want 1", id, count[id])
				}
			}
			if tc.exact && len(got) != len(truth) {
				t.Errorf("%d affected requests, truth %d", len(got), len(truth))
			}
			t.Logf("%d affected requests (truth %d)", len(got), len(truth))
		})
	}
}

// onlyTornLine fails unless err is nil or the damage of a torn last line:
// the simulator tears the last line of one gateway export (its row intact
// in the next), and ingest names that file as damaged (exit 3).
func onlyTornLine(t *testing.T, err error) {
	t.Helper()
	if err != nil && (!errors.Is(err, ingest.ErrDamaged) || strings.Count(err.Error(), "(torn last line") != 1 || strings.Contains(err.Error(), "stream)")) {
		t.Fatal(err)
	}
}
