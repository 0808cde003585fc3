package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIngestCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "case.duckdb")
	logPath := filepath.Join(dir, "requests.jsonl")
	os.WriteFile(logPath, []byte(`{"request_id":"r1","ts":"2026-09-01T10:00:00Z","tenant_id":"t1","model":"m","prompt_tokens":5}
{"request_id":"r1","ts":"2026-09-01T12:00:00+02:00","tenant_id":"t1","model":"m","prompt_tokens":5}
{"request_id":"r2","ts":"2026-09-01T10
`), 0o644)
	code, out, errOut := runCLI(t, "ingest", "--db", db, logPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "read 3, loaded 1, rejected 1, duplicates 1") || !strings.Contains(out, "requests.jsonl: jsonl/none") {
		t.Errorf("output:\n%s", out)
	}
	code, out, _ = runCLI(t, "ingest", "--db", db, logPath)
	if code != 0 || !strings.Contains(out, "already loaded") || !strings.Contains(out, "read 0, loaded 0, rejected 0, duplicates 0") {
		t.Errorf("second load: exit %d\n%s", code, out)
	}

	bin := filepath.Join(dir, "core")
	os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 1, 2, 3}, 0o644)
	code, out, errOut = runCLI(t, "ingest", "--db", filepath.Join(dir, "other.duckdb"), logPath, bin)
	if code != 3 {
		t.Errorf("binary: exit %d, want 3", code)
	}
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.Contains(errOut, bin) || !strings.Contains(errOut, "binary") {
		t.Errorf("binary: stderr %q", errOut)
	}
	if out != "" {
		t.Errorf("binary: nothing loaded, yet stdout %q", out)
	}

	for _, args := range [][]string{
		{"ingest", logPath},
		{"ingest", "--db", db, "--preset", "engine", "--mapping", "m.yaml", logPath},
		{"ingest", "--db", db, "--format", "xml", logPath},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
