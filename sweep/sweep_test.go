package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/internal/csvtest"
	"github.com/leakmap/leakmap/simulate"
)

// TestAgainstSimulation: on the simulator's incidents (every allocator,
// shared templates, noise), sweep.csv's cross-tenant pairs are exactly the
// truth's planted cross-tenant copies of the same model, and the days with
// leaking responses start and end with the truth's.
func TestAgainstSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation end to end")
	}
	for _, alloc := range []string{incident.AllocSorted, incident.AllocFIFO, incident.AllocLIFO} {
		t.Run(alloc, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := simulate.DefaultConfig()
			cfg.Requests, cfg.Allocator = 12000, alloc
			if !cfg.Templates {
				t.Fatal("the simulator's default has no shared templates")
			}
			if _, err := simulate.Generate(ctx, nil, dir, cfg); err != nil {
				t.Fatal(err)
			}
			db, err := casedb.Open(ctx, filepath.Join(dir, "case.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := ingest.Run(ctx, db, nil, []string{filepath.Join(dir, "logs")}, ingest.Options{}); err != nil {
				t.Fatal(err)
			}
			sum, err := Run(ctx, db, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if err := WriteCSV(ctx, db, out); err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, r := range csvtest.Read(t, filepath.Join(out, "sweep.csv")) {
				if r["response_tenant_id"] == r["source_tenant_id"] {
					t.Errorf("self pair in sweep.csv: %v", r)
				}
				got = append(got, r["response_request_id"]+"<"+r["source_request_id"])
			}
			var firstDay, lastDay string
			for _, r := range csvtest.Read(t, filepath.Join(dir, "truth", "text_pairs.csv")) {
				if r["response_tenant_id"] == r["source_tenant_id"] || r["response_model"] != r["source_model"] {
					continue
				}
				want = append(want, r["response_request_id"]+"<"+r["source_request_id"])
				day := r["response_ts"][:10]
				if firstDay == "" || day < firstDay {
					firstDay = day
				}
				if day > lastDay {
					lastDay = day
				}
			}
			sort.Strings(want)
			if len(want) == 0 {
				t.Fatal("the simulation planted no cross-tenant copy: nothing is tested")
			}
			if !slices.Equal(got, want) { // sweep.csv is sorted by response then source id
				t.Errorf("sweep pairs (%d) != truth's cross-tenant text pairs (%d)\n%s", len(got), len(want), diff(got, want))
			}
			var days []string
			for _, r := range csvtest.Read(t, filepath.Join(out, "sweep_days.csv")) {
				if r["leaking_responses"] != "0" {
					days = append(days, r["day"])
				}
			}
			sort.Strings(days)
			if len(days) == 0 || days[0] != firstDay || days[len(days)-1] != lastDay {
				t.Errorf("leaking days %v, truth from %s to %s", days, firstDay, lastDay)
			}
			t.Logf("responses %d, candidates %d, strong %d (truth %d); strongest weak match: rare=%d run=%d",
				sum.Responses, sum.Candidates, sum.Matches, len(want), sum.WeakRare, sum.WeakRun)
		})
	}
}

func diff(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, x := range got {
		g[x] = true
	}
	for _, x := range want {
		w[x] = true
	}
	s := ""
	n := 0
	for _, x := range got {
		if !w[x] && n < 5 {
			s += fmt.Sprintf("  extra %s\n", x)
			n++
		}
	}
	n = 0
	for _, x := range want {
		if !g[x] && n < 5 {
			s += fmt.Sprintf("  missing %s\n", x)
			n++
		}
	}
	return s
}
