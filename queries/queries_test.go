package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/queries"
)

// TestEveryQueryRunsOnFixture runs every embedded query, in name order, on a
// case database holding testdata/fixture.sql.
func TestEveryQueryRunsOnFixture(t *testing.T) {
	ctx := context.Background()
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // temp tables made by one file must be seen by the next
	fixture, err := os.ReadFile("testdata/fixture.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, string(fixture)); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	names := queries.Names()
	if len(names) == 0 {
		t.Fatal("no queries embedded")
	}
	// casedb's own queries bring a case of an earlier version to this one
	// (one drops a table the schema then makes again): they run in one
	// transaction, rolled back, so that the later queries see the fixture.
	inCasedb := false
	for _, name := range names {
		if casedbQuery := strings.HasPrefix(name, "casedb_"); casedbQuery != inCasedb {
			stmt := "ROLLBACK"
			if casedbQuery {
				stmt = "BEGIN TRANSACTION"
			}
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			inCasedb = casedbQuery
		}
		t.Run(name, func(t *testing.T) {
			q := queries.Get(name)
			if !strings.HasPrefix(strings.TrimSpace(q), "--") || queries.Description(name) == "" {
				t.Errorf("%s.sql does not start with a one-line description comment", name)
			}
			stmt := strings.TrimSuffix(strings.TrimSpace(stripComments(q)), ";")
			if args := queries.TestArgs(name); args != "" {
				if _, err := db.ExecContext(ctx, "PREPARE q_fixture AS "+stmt); err != nil {
					t.Fatalf("prepare: %v", err)
				}
				stmt = "EXECUTE q_fixture(" + args + ")"
				defer db.ExecContext(ctx, "DEALLOCATE q_fixture")
			}
			rows, err := db.QueryContext(ctx, stmt)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			defer rows.Close()
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("rows: %v", err)
			}
		})
	}
}

// stripComments drops a query's comment lines.
func stripComments(q string) string {
	var b strings.Builder
	for _, line := range strings.Split(q, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
