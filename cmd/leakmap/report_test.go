package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCommand runs 'leakmap report' on the report package's test case.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	script, err := os.ReadFile("../../report/testdata/case.sql")
	if err != nil {
		t.Fatal(err)
	}
	dbPath, inc := sqlCase(t, dir, string(script), `id: WAI-CLI
models: [glm-5.3]
window: {start: 2026-09-01T00:00:00Z, end: 2026-09-04T12:00:00Z}
aware_at: 2026-09-09T10:00:00Z
as_of: 2026-09-10T09:00:00Z
capacity: {prefill_pool_tokens: 681280, decode_pool_tokens: 3200000}
`)
	out := filepath.Join(dir, "out")

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ok", []string{"report", "--db", dbPath, "--incident", inc, "--out", out}, 0, "report.xlsx"},
		{"as-of flag", []string{"report", "--db", dbPath, "--incident", inc, "--out", out, "--as-of", "2026-09-13T00:00:00Z"}, 0, "report.html"},
		{"bad as-of", []string{"report", "--db", dbPath, "--incident", inc, "--out", out, "--as-of", "yesterday"}, 2, "--as-of"},
		{"as-of year 1", []string{"report", "--db", dbPath, "--incident", inc, "--out", out, "--as-of", "0001-01-01T00:00:00Z"}, 2, "--as-of: 0001-01-01T00:00:00Z is outside the years"},
		{"as-of before the window", []string{"report", "--db", dbPath, "--incident", inc, "--out", out, "--as-of", "2026-08-01T00:00:00Z"}, 2, "is before window.start"},
		{"missing flags", []string{"report", "--db", dbPath}, 2, `required flag(s) "incident", "out" not set`},
		{"bad incident", []string{"report", "--db", dbPath, "--incident", filepath.Join(dir, "none.yaml"), "--out", out}, 2, "incident"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
		})
	}
	// --as-of decides the 72-hour check: by 2026-09-13 the deadline has passed.
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(page), "report as of 2026-09-13T00:00:00Z") {
		t.Error("report.html does not carry the --as-of date")
	}
}
