package analysis

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestCSVGolden runs the analysis twice on the same case and checks that the
// CSV outputs are byte-identical to each other and to testdata/golden.
func TestCSVGolden(t *testing.T) {
	rows := []req{
		{id: "S1", ts: 0, end: 1, tenant: "acme", prompt: 5, decode: "d1", promptText: "The quick brown fox jumps over the lazy dog while seven wizards quietly hex jolly kings"},
		{id: "S2", ts: 2, end: 3, tenant: "beta,corp", prompt: 5, decode: "d2", promptText: "zebra quagga okapi giraffe lion"},
		{id: "S3", ts: 3.25, end: -1, tenant: "gamma", prompt: 5, promptText: "alpha beta gamma delta epsilon"},
		{id: "T", ts: 10, end: 11, tenant: "tee", prompt: 20, prefill: "p1", resp: "Quick brown FOX, jumps over! the lazy dog while seven wizards quietly hex: zebra quagga okapi giraffe lion"},
		{id: "U", ts: 12, end: 13, tenant: "acme", prompt: 60, completion: 2, decode: "d1", prefill: "p2"},
		{id: "V", ts: 14, end: 15, tenant: "vee", prompt: 60, completion: 2, decode: "d1", status: 200},
	}
	db := newCase(t, rows)
	inc := testIncident(t, 10, 100, "  allocator: lifo", "")
	ctx := context.Background()
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, dir := range dirs {
		runCase(t, db, inc)
		if err := WriteCSV(ctx, db, nil, dir); err != nil {
			t.Fatal(err)
		}
	}
	golden := filepath.Join("testdata", "golden")
	for _, f := range OutputFiles() {
		a, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", f)
		}
		g := filepath.Join(golden, f)
		if *update {
			if err := os.MkdirAll(golden, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(g, a, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(a, want) {
			t.Errorf("%s differs from %s:\ngot:\n%s\nwant:\n%s", f, g, a, want)
		}
	}
}
