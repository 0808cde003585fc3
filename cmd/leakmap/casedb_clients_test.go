package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// TestCaseDatabaseOpensInAnyClient: a case database is evidence other tools
// open. After a whole run it must hold only tables and views a second,
// read-only client can query — no view left pointing at leakmap's memory
// (an Arrow registration is such a view, and reading it crashes a client).
func TestCaseDatabaseOpensInAnyClient(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	if code, out, stderr := runCLI(t, "demo", "--out", dir); code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, stderr)
	}
	connector, err := duckdb.NewConnector(filepath.Join(dir, "case.duckdb")+"?access_mode=read_only", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()

	rows, err := db.Query(`SELECT 'table', table_name, '' FROM duckdb_tables() WHERE NOT internal AND NOT temporary
		UNION ALL SELECT 'view', view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type object struct{ kind, name, sql string }
	var objects []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.kind, &o.name, &o.sql); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, o)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(objects) < 10 {
		t.Fatalf("only %d tables and views in the case database", len(objects))
	}
	for _, o := range objects {
		if strings.Contains(strings.ToLower(o.sql), "arrow_scan") || strings.HasPrefix(o.name, "arrow_") {
			t.Errorf("%s %s is an Arrow registration left in the case database", o.kind, o.name)
			continue
		}
		var n int64
		if err := db.QueryRow(`SELECT count(*) FROM (SELECT * FROM "` + o.name + `")`).Scan(&n); err != nil {
			t.Errorf("%s %s cannot be read by a second client: %v", o.kind, o.name, err)
		}
	}
	db.Close()
	t.Run("node", func(t *testing.T) { nodeReadsCase(t, filepath.Join(dir, "case.duckdb"), len(objects)) })
}

// nodeReadsCase opens the case with the DuckDB Node API (the client that
// crashed on the Arrow views) and reads every table and view, where Node
// and the npm registry are there; the package is installed per run.
func nodeReadsCase(t *testing.T, path string, objects int) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "node", "check.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The Node API of the DuckDB version leakmap links (1.5.6).
	install := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "@duckdb/node-api@1.5.6-r.1")
	install.Dir = work
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install @duckdb/node-api: %v (no registry here?)\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(work, "check.mjs"), mustRead(t, script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, "node", "check.mjs", path)
	run.Dir = work
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the DuckDB Node API cannot read the case: %v\n%s", err, out)
	}
	if want := "ok " + strconv.Itoa(objects); !strings.Contains(string(out), want+"\n") {
		t.Errorf("node read %q, want %s tables and views", strings.TrimSpace(string(out)), want)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
