package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

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
}
