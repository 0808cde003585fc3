package sheetcsv

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// TestWriteQueryInPieces: a result of several read-back pieces comes out
// whole and in the query's order (here the reverse of the rows' making,
// on several threads), with its header; an empty result is its header
// alone; with DuckDB free to reorder, WriteQuery refuses.
func TestWriteQueryInPieces(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("SET threads = 4"); err != nil {
		t.Fatal(err)
	}
	n := 2*readChunk + 12345
	dir := t.TempDir()
	for _, c := range []struct {
		name, query string
		rows        int
	}{
		{"pieces", "SELECT i AS n, 'row ' || i AS label FROM range(" + strconv.Itoa(n) + ") t(i) ORDER BY i DESC;", n},
		{"empty", "SELECT 1 AS n, 'x' AS label WHERE false", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".csv")
			if err := WriteQuery(ctx, db, c.query, path); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Scan()
			if sc.Text() != "n,label" {
				t.Fatalf("header %q", sc.Text())
			}
			var got int
			for sc.Scan() {
				want := n - 1 - got
				if line := sc.Text(); line != strconv.Itoa(want)+",row "+strconv.Itoa(want) {
					t.Fatalf("row %d: %q, want n=%d", got, line, want)
				}
				got++
			}
			if got != c.rows {
				t.Errorf("%d rows, want %d", got, c.rows)
			}
		})
	}
	if _, err := db.Exec("SET preserve_insertion_order = false"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("RESET preserve_insertion_order")
	err = WriteQuery(ctx, db, "SELECT 1 AS n", filepath.Join(dir, "unordered.csv"))
	if err == nil || !strings.Contains(err.Error(), "preserve_insertion_order") {
		t.Errorf("err = %v, want a refusal naming preserve_insertion_order", err)
	}
}
