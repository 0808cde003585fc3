package analysis

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCSVFormulaCellsNeutralised: tenant ids and request ids a spreadsheet
// would run as formulas are written with a leading ' in the three CSV
// outputs, while numbers stay numbers and the case database keeps the
// exact values.
func TestCSVFormulaCellsNeutralised(t *testing.T) {
	evil := `=HYPERLINK("http://evil.test","r")`
	rows := []req{
		{id: "@A", ts: 0, end: 5, tenant: "+src", prompt: 3, completion: 1, decode: "d1"},
		{id: "-T", ts: 6, end: 8, tenant: evil, prompt: 6, completion: 1, decode: "d1"},
	}
	db := newCase(t, rows)
	runCase(t, db, testIncident(t, 5, 12, "  allocator: lifo", ""))
	out := t.TempDir()
	if err := WriteCSV(context.Background(), db, nil, out); err != nil {
		t.Fatal(err)
	}
	read := func(name string) map[string][]string {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		cols := map[string][]string{}
		for _, r := range recs[1:] {
			for i, h := range recs[0] {
				cols[h] = append(cols[h], r[i])
			}
		}
		return cols
	}
	aff := read("affected_requests.csv")
	if !slices.Equal(aff["request_id"], []string{"'-T"}) || !slices.Equal(aff["tenant_id"], []string{"'" + evil}) || !slices.Equal(aff["prompt_tokens"], []string{"6"}) {
		t.Errorf("affected_requests.csv: %v", aff)
	}
	exp := read("exposures.csv")
	if !slices.Equal(exp["source_request_id"], []string{"'@A"}) || !slices.Equal(exp["source_tenant_id"], []string{"'+src"}) ||
		!slices.Equal(exp["recipient_tenant_id"], []string{"'" + evil}) {
		t.Errorf("exposures.csv: %v", exp)
	}
	ten := read("tenants.csv")
	if !slices.Equal(ten["tenant_id"], []string{"'+src", "'" + evil}) || !slices.Equal(ten["affected_requests"], []string{"0", "1"}) {
		t.Errorf("tenants.csv: %v", ten)
	}
	var got string
	if err := db.QueryRow("SELECT tenant_id FROM affected_requests").Scan(&got); err != nil || got != evil {
		t.Errorf("case database: %q %v, want the exact value", got, err)
	}
}
