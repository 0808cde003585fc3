package sweep

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/internal/csvtest"
	"github.com/leakmap/leakmap/internal/simcase"
	"github.com/leakmap/leakmap/simulate"
)

// TestAgainstSimulation: on the simulator's incidents (every allocator,
// shared templates, noise), sweep.csv's cross-tenant pairs are exactly the
// truth's text-proven cross-tenant copies of the same model, and the days with
// leaking responses start and end with the truth's.
func TestAgainstSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation end to end")
	}
	for _, alloc := range []string{incident.AllocSorted, incident.AllocFIFO, incident.AllocLIFO} {
		t.Run(alloc, func(t *testing.T) {
			ctx := context.Background()
			cfg := simulate.DefaultConfig()
			cfg.Requests, cfg.Allocator = 12000, alloc
			if !cfg.Templates {
				t.Fatal("the simulator's default has no shared templates")
			}
			dir, db := simcase.Ingested(t, cfg)
			sum, err := Run(ctx, db, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if err := WriteCSV(ctx, db, nil, out); err != nil {
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
				if r["response_tenant_id"] == r["source_tenant_id"] || r["response_model"] != r["source_model"] || r["proven"] != "true" {
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

// TestIncremental: a second sweep hashes nothing; after new log files it
// hashes only their rows, and finds what a sweep of everything at once finds.
func TestIncremental(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := simulate.DefaultConfig()
	cfg.Requests = 3000
	if _, err := simulate.Generate(ctx, nil, dir, cfg); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "logs", "requests-*"))
	if err != nil || len(files) < 4 {
		t.Fatalf("log parts %v (%v)", files, err)
	}
	sort.Strings(files)
	open := func(name string) *sql.DB {
		db, err := casedb.Open(ctx, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	load := func(db *sql.DB, fs []string) {
		if _, err := ingest.Run(ctx, db, nil, fs, ingest.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(db *sql.DB) (n int64) {
		if err := db.QueryRow(`SELECT count(*) FROM requests WHERE prompt_text IS NOT NULL OR response_text IS NOT NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sweepIt := func(db *sql.DB) *Summary {
		s, err := Run(ctx, db, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	inc := open("inc.duckdb")
	half := len(files) / 2
	load(inc, files[:half])
	first := texts(inc)
	if s := sweepIt(inc); s.Index.Rows != first || first == 0 {
		t.Fatalf("first sweep hashed %d rows, %d have text", s.Index.Rows, first)
	}
	if err := WriteCSV(ctx, inc, nil, filepath.Join(dir, "inc1")); err != nil {
		t.Fatal(err)
	}
	if s := sweepIt(inc); s.Index.Rows != 0 || !s.Index.UpToDate {
		t.Errorf("second sweep hashed %d rows again (up to date: %v)", s.Index.Rows, s.Index.UpToDate)
	}
	// The second sweep reads the tenant counts the first one kept.
	if err := WriteCSV(ctx, inc, nil, filepath.Join(dir, "inc2")); err != nil {
		t.Fatal(err)
	}
	for _, f := range Files {
		x, _ := os.ReadFile(filepath.Join(dir, "inc1", f))
		y, _ := os.ReadFile(filepath.Join(dir, "inc2", f))
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s differs between the first sweep and the second (%d and %d bytes)", f, len(x), len(y))
		}
	}
	load(inc, files[half:])
	s := sweepIt(inc)
	if s.Index.Rows != texts(inc)-first {
		t.Errorf("after new files: hashed %d rows, %d are new", s.Index.Rows, texts(inc)-first)
	}
	all := open("all.duckdb")
	load(all, files)
	sa := sweepIt(all)
	a, b := filepath.Join(dir, "inc"), filepath.Join(dir, "all")
	if err := WriteCSV(ctx, inc, nil, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(ctx, all, nil, b); err != nil {
		t.Fatal(err)
	}
	for _, f := range Files {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the incremental and the whole sweep", f)
		}
	}
	if s.Matches != sa.Matches || s.Matches == 0 {
		t.Errorf("matches %d incremental, %d whole", s.Matches, sa.Matches)
	}
}
