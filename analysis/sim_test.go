package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/csvtest"
	"github.com/leakmap/leakmap/internal/simcase"
	"github.com/leakmap/leakmap/simulate"
)

func set(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// evidenceValue returns the value of key in an evidence string.
func evidenceValue(ev, key string) string {
	for _, kv := range strings.Fields(ev) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestAgainstSimulation runs simulate -> ingest -> analyze for every
// allocator policy, with and without noise, and checks the outputs against
// the simulator's ground truth.
func TestAgainstSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation end to end")
	}
	for _, policy := range []string{incident.AllocSorted, incident.AllocFIFO, incident.AllocLIFO} {
		for _, noise := range []bool{false, true} {
			name := fmt.Sprintf("%s/noise=%t", policy, noise)
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				cfg := simulate.DefaultConfig()
				cfg.Requests, cfg.Allocator, cfg.Noise = 12000, policy, noise
				if policy == incident.AllocLIFO {
					cfg.PageSize = 16 // page rounding, against the truth too
				}
				dir, db := simcase.Ingested(t, cfg)
				inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Run(ctx, db, nil, inc); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "out")
				if err := WriteCSV(ctx, db, nil, out); err != nil {
					t.Fatal(err)
				}
				checkAgainstTruth(t, filepath.Join(dir, "truth"), out, noise)
			})
		}
	}
}

// checkTriggers: the affected requests and their recipient tenants equal
// the truth's; it returns the output's affected requests.
func checkTriggers(t *testing.T, truthDir, outDir string) []map[string]string {
	t.Helper()
	tAff := csvtest.Read(t, filepath.Join(truthDir, "affected_requests.csv"))
	oAff := csvtest.Read(t, filepath.Join(outDir, "affected_requests.csv"))
	if len(tAff) == 0 {
		t.Fatal("the simulation has no trigger: nothing is tested")
	}
	equalLines(t, "affected requests", csvtest.Column(oAff, "request_id"), csvtest.Column(tAff, "request_id"))
	equalLines(t, "recipient tenants", sortedKeys(set(csvtest.Column(oAff, "tenant_id"))), sortedKeys(set(csvtest.Column(tAff, "tenant_id"))))
	return oAff
}

// checkConfirmed: the confirmed exposures (source>trigger) are exactly the
// truth's proven text pairs: the planted copies that are strong, specific
// matches by DESIGN.md's rule (a copy holding common phrases can fall short).
func checkConfirmed(t *testing.T, truthDir string, confirmed map[string]bool) {
	t.Helper()
	proven, copies := map[string]bool{}, 0
	for _, r := range csvtest.Read(t, filepath.Join(truthDir, "text_pairs.csv")) {
		copies++
		if r["proven"] == "true" {
			proven[r["source_request_id"]+">"+r["response_request_id"]] = true
		}
	}
	if len(proven) == 0 {
		t.Fatal("the simulation planted no text-proven copy: the confirmed tier is not tested")
	}
	t.Logf("confirmed %d, truth: %d proven of %d planted copies", len(confirmed), len(proven), copies)
	equalLines(t, "confirmed exposures (truth: proven text pairs)", sortedKeys(confirmed), sortedKeys(proven))
}

func checkAgainstTruth(t *testing.T, truthDir, outDir string, noise bool) {
	oAff := checkTriggers(t, truthDir, outDir)

	tExp := csvtest.Read(t, filepath.Join(truthDir, "exposures.csv"))
	oExp := csvtest.Read(t, filepath.Join(outDir, "exposures.csv"))
	pair := func(r map[string]string) string { return r["source_request_id"] + ">" + r["trigger_request_id"] }
	found := map[string]map[string]string{}
	confirmed := map[string]bool{}
	for _, r := range oExp {
		found[pair(r)] = r
		if r["tier"] == TierConfirmed {
			confirmed[pair(r)] = true
		}
		if (r["source_tenant_id"] == r["recipient_tenant_id"]) != (r["self_exposure"] == "true") {
			t.Errorf("%s: self_exposure %s for tenants %s, %s", pair(r), r["self_exposure"], r["source_tenant_id"], r["recipient_tenant_id"])
		}
	}
	checkConfirmed(t, truthDir, confirmed)

	hit, probableOrBetter := 0, 0
	var missed []string
	for _, r := range tExp {
		o, ok := found[pair(r)]
		if !ok {
			missed = append(missed, pair(r))
			continue
		}
		hit++
		if o["tier"] == TierConfirmed || o["tier"] == TierProbable {
			probableOrBetter++
		}
		if !noise && evidenceValue(o["evidence"], "slots") != r["slots"] {
			t.Errorf("%s: evidence %q, truth slots=%s", pair(r), o["evidence"], r["slots"])
		}
	}
	recall := float64(hit) / float64(len(tExp))
	t.Logf("truth exposures %d, found %d (%.4f), probable or confirmed %d, output exposures %d, confirmed %d",
		len(tExp), hit, recall, probableOrBetter, len(oExp), len(confirmed))
	if !noise {
		// No noise: the replay is the truth's, pair for pair.
		if probableOrBetter != len(tExp) {
			t.Errorf("noise-free: %d of %d truth exposures found as probable or confirmed; missed e.g. %v",
				probableOrBetter, len(tExp), missed[:min(5, len(missed))])
		}
		if len(oExp) != len(tExp) {
			t.Errorf("noise-free: %d exposures, truth %d", len(oExp), len(tExp))
		}
		tUnk := csvtest.Read(t, filepath.Join(truthDir, "unknown_slots.csv"))
		want := map[string]string{}
		for _, r := range tUnk {
			want[r["trigger_request_id"]] = r["unknown_slots"]
		}
		for _, r := range oAff {
			if r["unknown_slots"] != want[r["request_id"]] {
				t.Errorf("%s: unknown_slots %q, truth %q", r["request_id"], r["unknown_slots"], want[r["request_id"]])
			}
		}
	} else if recall < 0.95 {
		t.Errorf("with noise: %.4f of truth exposures found over all tiers, want >= 0.95; missed e.g. %v",
			recall, missed[:min(5, len(missed))])
	}
}
