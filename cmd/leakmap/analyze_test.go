package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnalyzeUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "incident.yaml")
	if err := os.WriteFile(bad, []byte("id: X\nmodels: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "case.duckdb")
	tests := [][]string{
		{"analyze", "--db", db, "--out", dir},                                                // no incident
		{"analyze", "--db", db, "--incident", filepath.Join(dir, "none.yaml"), "--out", dir}, // missing file
		{"analyze", "--db", db, "--incident", bad, "--out", dir},                             // invalid incident
	}
	for _, args := range tests {
		if code, _, stderr := runCLI(t, args...); code != 2 {
			t.Errorf("leakmap %v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

func TestAnalyzeWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "-q", "simulate", "--out", dir, "--requests", "3000"); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	db := filepath.Join(dir, "case.duckdb")
	if code, _, stderr := runCLI(t, "-q", "ingest", "--db", db, filepath.Join(dir, "logs")); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "-q", "analyze", "--db", db, "--incident", filepath.Join(dir, "incident.yaml"), "--out", out)
	if code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"affected requests: ", "exposures: ", "replay: ", "wrote " + filepath.Join(out, "exposures.csv")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"affected_requests.csv", "exposures.csv", "tenants.csv"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(b), "\n") < 2 {
			t.Errorf("%s has no data rows:\n%s", f, b)
		}
	}
}
