package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStopsOnDamagedLog: a truncated .gz among the logs stops 'run'
// after ingest with exit 3 naming it (no analysis, no notices), unless
// --keep-going, which drafts everything and says what is missing.
func TestRunStopsOnDamagedLog(t *testing.T) {
	example := filepath.Join("..", "..", "docs", "example")
	data, err := os.ReadFile(filepath.Join(example, "logs", "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	if err := os.WriteFile(filepath.Join(logs, "a.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for k := range 50 {
		zw.Write(bytes.ReplaceAll(data, []byte(`"request_id":"`), []byte(fmt.Sprintf(`"request_id":"z%d-`, k))))
	}
	zw.Close()
	cut := filepath.Join(logs, "b.jsonl.gz")
	if err := os.WriteFile(cut, gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(out string, extra ...string) []string {
		return append(append([]string{"run", "--incident", filepath.Join(example, "incident.yaml"),
			"--tenants", filepath.Join(example, "tenants.csv"), "--out", out}, extra...), logs)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, args(out)...)
	if code != 3 || !strings.Contains(stderr, cut+" (truncated gzip stream)") || !strings.Contains(stdout, "[truncated gzip stream: the rows after the break are missing]") {
		t.Fatalf("exit %d, want 3 naming %s\nstdout: %s\nstderr: %s", code, cut, stdout, stderr)
	}
	for _, f := range []string{"affected_requests.csv", "outbox"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s written after a damaged ingest", f)
		}
	}
	// The same case again, going on knowingly: the file is already loaded,
	// and still reported.
	code, stdout, stderr = runCLI(t, args(out, "--keep-going")...)
	if code != 0 || !strings.Contains(stderr, "going on (--keep-going)") || !strings.Contains(stdout, "truncated gzip stream when loaded") {
		t.Fatalf("--keep-going: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "outbox", "index.csv")); err != nil {
		t.Errorf("--keep-going drafted no notices: %v", err)
	}
}
