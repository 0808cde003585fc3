package report

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"golang.org/x/net/html"
)

const testIncident = `id: WAI-TEST-0901
title: Cross-tenant data in glm-5.3 responses (test case)
models: [glm-5.3]
window: {start: 2026-09-01T00:00:00Z, end: 2026-09-04T12:00:00Z}
launched_at: 2026-08-31T00:00:00Z
discovered_at: 2026-09-04T09:10:00Z
aware_at: 2026-09-09T10:00:00Z
contained_at: 2026-09-04T12:00:00Z
as_of: 2026-09-10T09:00:00Z
capacity:
  max_context_tokens: 1048576
  prefill_pool_tokens: 681280
  decode_pool_tokens: 3200000
  timeline: capacity.csv
provider: {name: Example Inference SAS, email: security@example.net, dpo_email: dpo@example.net, country: FR}
`

const testCapacity = `instance,role,pool_tokens,valid_from
prefill-b,prefill,681280,2026-08-31T00:00:00Z
prefill-b,prefill,2040000,2026-09-04T12:00:00Z
`

var testAsOf = time.Date(2026, 9, 10, 9, 0, 0, 0, time.UTC)

// newCase builds the test case database from testdata/case.sql and loads
// the incident file that goes with it.
func newCase(t testing.TB) (*sql.DB, *incident.Incident) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := casedb.Open(ctx, filepath.Join(dir, "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	script, err := os.ReadFile("testdata/case.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, string(script)); err != nil {
		t.Fatalf("case.sql: %v", err)
	}
	for name, body := range map[string]string{"incident.yaml": testIncident, "capacity.csv": testCapacity} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return db, inc
}

// writeReport runs Write into a fresh folder.
func writeReport(t testing.TB, db *sql.DB, inc *incident.Incident) (string, *Result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	res, err := Write(context.Background(), db, nil, inc, out, testAsOf)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return out, res
}

// writePage writes the report and returns its page's bytes and parse tree.
func writePage(t testing.TB, db *sql.DB, inc *incident.Incident) ([]byte, *html.Node) {
	t.Helper()
	out, _ := writeReport(t, db, inc)
	raw, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return raw, doc
}
