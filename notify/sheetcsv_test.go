package notify

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoticeCSVFormulaCellsNeutralised: a tenant id and a request id that a
// spreadsheet would run as formulas reach the customer's attachment and
// index.csv with a leading ', while the notices table keeps the exact id.
func TestNoticeCSVFormulaCellsNeutralised(t *testing.T) {
	evil := `=HYPERLINK("http://evil.test","r")`
	db := openDB(t)
	sqlText := strings.ReplaceAll(strings.ReplaceAll(fixtureSQL, "'t-gamma'", "'"+evil+"'"), "'r-g1'", "'@r-g1'")
	if _, err := db.Exec(sqlText); err != nil {
		t.Fatal(err)
	}
	csvEvil := `"` + strings.ReplaceAll(evil, `"`, `""`) + `"`
	dir, err := ParseDirectory([]byte(strings.Replace(fixtureDirectory, "t-gamma,", csvEvil+",", 1)), "tenants.csv")
	if err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(t.TempDir(), "outbox")
	res, err := Draft(context.Background(), db, nil, testIncident(t, ""), dir, outbox, testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	p := decodeForTest(t, readOutbox(t, outbox, noticeFor(t, res, evil).File))
	recs, err := csv.NewReader(strings.NewReader(p.attachment)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs[1:] {
		ids = append(ids, r[0])
	}
	if strings.Join(ids, " ") != "'@r-g1 r-g2" {
		t.Errorf("attachment request ids %q, want '@r-g1 and r-g2", ids)
	}
	f, err := os.Open(filepath.Join(outbox, IndexName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	index, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range index[1:] {
		if strings.Contains(r[3], "HYPERLINK") {
			found = true
			if r[3] != "'"+evil {
				t.Errorf("index.csv tenant_id %q", r[3])
			}
		}
		for _, c := range r {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
				t.Errorf("index.csv cell %q opens a formula", c)
			}
		}
	}
	if !found {
		t.Error("index.csv: no row for the tenant")
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM notices WHERE tenant_id = ?", evil).Scan(&n); err != nil || n != 1 {
		t.Errorf("notices table: %d rows with the exact id (%v)", n, err)
	}
}
