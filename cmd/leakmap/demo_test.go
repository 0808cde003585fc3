package main

import (
	"bytes"
	"fmt"
	"github.com/leakmap/leakmap/internal/csvtest"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDemoEndToEndDeterministic runs the whole pipeline twice on the same
// simulated incident, in two folders, and checks every output but the
// database is byte-identical, and that the analysis agrees with the
// simulator's truth on the affected requests.
func TestDemoEndToEndDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	// Same inputs means the same paths too (the ingest ledger records them):
	// run twice into one folder, keeping the first run's outputs aside.
	base := t.TempDir()
	dir := filepath.Join(base, "demo")
	var dirs []string
	for i := 0; i < 2; i++ {
		code, out, stderr := runCLI(t, "demo", "--out", dir)
		if code != 0 {
			t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
		}
		for _, want := range []string{"report.html", "exposures.csv", "outbox/"} {
			if !strings.Contains(out, want) {
				t.Errorf("demo output does not point to %s", want)
			}
		}
		kept := filepath.Join(base, fmt.Sprintf("run%d", i))
		if err := os.Rename(dir, kept); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, kept)
	}
	files := outputFiles(t, dirs[0])
	for _, want := range []string{"affected_requests.csv", "exposures.csv", "tenants.csv", "report.xlsx", "report.html", "outbox/index.csv", "preflight/capacity.csv", "preflight/findings.csv"} {
		if _, ok := files[want]; !ok {
			t.Errorf("missing output %s", want)
		}
	}
	other := outputFiles(t, dirs[1])
	if len(other) != len(files) {
		t.Errorf("second run wrote %d files, first %d", len(other), len(files))
	}
	for name, data := range files {
		if !bytes.Equal(data, other[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}

	got := csvtest.ReadColumn(t, filepath.Join(dirs[0], "affected_requests.csv"), "request_id")
	want := csvtest.ReadColumn(t, filepath.Join(dirs[0], "simulated", "truth", "affected_requests.csv"), "request_id")
	if strings.Join(sorted(got), ",") != strings.Join(sorted(want), ",") {
		t.Errorf("affected requests differ from the simulator's truth:\n got %v\nwant %v", got, want)
	}
	if len(want) == 0 {
		t.Error("the demo's truth has no affected request")
	}
}

// outputFiles reads every output under dir except the case database and the
// simulator's own files.
func outputFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() || strings.HasPrefix(rel, "simulated") || strings.Contains(rel, ".duckdb") {
			return nil
		}
		data, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
