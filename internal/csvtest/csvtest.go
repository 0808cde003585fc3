// Package csvtest reads the CSV files leakmap writes (outputs, the
// simulator's truth) back in tests, so each test compares values, not bytes.
package csvtest

import (
	"encoding/csv"
	"os"
	"testing"
)

// Read reads a CSV file with a header row into one map per record, keyed by
// column name. Any error fails the test.
func Read(t testing.TB, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no header", path)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := make(map[string]string, len(recs[0]))
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// Column returns one column of rows read by Read, in file order.
func Column(rows []map[string]string, col string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r[col])
	}
	return out
}

// ReadColumn reads one column of a CSV file; a missing column fails the test.
func ReadColumn(t testing.TB, path, col string) []string {
	t.Helper()
	rows := Read(t, path)
	if len(rows) > 0 {
		if _, ok := rows[0][col]; !ok {
			t.Fatalf("%s: no column %q", path, col)
		}
	}
	return Column(rows, col)
}
