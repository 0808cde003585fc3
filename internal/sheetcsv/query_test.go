package sheetcsv

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
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
	db := memDB(t, "SET threads = 4")
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
	err := WriteQuery(ctx, db, "SELECT 1 AS n", filepath.Join(dir, "unordered.csv"))
	if err == nil || !strings.Contains(err.Error(), "preserve_insertion_order") {
		t.Errorf("err = %v, want a refusal naming preserve_insertion_order", err)
	}
}

// TestArrowWritesAsScan: the Arrow read-back writes the same bytes as
// rows.Scan and field for every type it covers (NULLs, negative and large
// numbers, times with and without a fraction, before 1970 and with
// another offset, text that needs quotes or neutralising), over several
// pieces; a type it does not cover sends the whole file through rows.Scan.
func TestArrowWritesAsScan(t *testing.T) {
	ctx := context.Background()
	db := memDB(t, "SET TimeZone = 'UTC'")
	n := readChunk + 777
	covered := `SELECT i AS n, (i * 7 - 1000)::INTEGER AS i32, (i * 1000003)::UBIGINT AS u64,
	        CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN i * 1e21 WHEN 2 THEN i * 1e-9 ELSE -i / 7.0 END::DOUBLE AS f64, i % 2 = 0 AS flag,
	        CASE WHEN i % 3 = 0 THEN NULL ELSE ['=cmd', '+1', '-x', '@y', 'a,b', 'say "hi"', 'line
	break', '', 'plain', '	tab'][i % 10 + 1] END AS label,
	        TIMESTAMPTZ '1969-12-31 23:59:58.5+00' + to_microseconds(i * 1234567) AS tz,
	        CASE WHEN i % 4 = 0 THEN NULL ELSE TIMESTAMP '2026-09-01 00:00:00' + to_seconds(i) END AS plain_ts,
	        (TIMESTAMPTZ '2026-09-01 12:00:00+05:30')::TIMESTAMPTZ AS offset_ts,
	        -9223372036854775807 + i AS big
	    FROM range(` + strconv.Itoa(n) + `) t(i) ORDER BY i DESC`
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range []struct {
		name, query string
		arrow       bool
	}{
		{"covered", covered, true},
		{"uncovered", "SELECT i::SMALLINT AS s, i::HUGEINT AS h, 1.5::DECIMAL(4,2) AS d, DATE '2026-09-01' + i::INTEGER AS day, 'x' || i AS label FROM range(1000) t(i)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE rows_"+c.name+" AS "+c.query); err != nil {
				t.Fatal(err)
			}
			ok, err := arrowFormattable(ctx, conn, tableSource("rows_"+c.name).schema)
			if err != nil || ok != c.arrow {
				t.Fatalf("arrowFormattable = %v, %v; want %v", ok, err, c.arrow)
			}
			var viaScan strings.Builder
			w := NewWriter(&viaScan)
			scanned, err := writeScan(ctx, conn, tableSource("rows_"+c.name), w)
			if err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if c.arrow {
				// Formatted on several workers, written in order.
				var viaArrow strings.Builder
				rows, err := writeArrow(ctx, conn, tableSource("rows_"+c.name), &viaArrow)
				if err != nil {
					t.Fatal(err)
				}
				if rows != scanned || rows != int64(n) {
					t.Fatalf("arrow wrote %d rows, scan %d, want %d", rows, scanned, n)
				}
				if viaArrow.String() != viaScan.String() {
					a, s := strings.Split(viaArrow.String(), "\n"), strings.Split(viaScan.String(), "\n")
					for i := range min(len(a), len(s)) {
						if a[i] != s[i] {
							t.Fatalf("line %d: arrow %q, scan %q", i, a[i], s[i])
						}
					}
					t.Fatalf("arrow %d lines, scan %d", len(a), len(s))
				}
				if lines := strings.Count(viaScan.String(), "\n"); lines < n+1 {
					t.Fatalf("%d lines, want at least %d", lines, n+1)
				}
			}
			// WriteQuery picks the path and writes the same bytes.
			path := filepath.Join(t.TempDir(), "out.csv")
			if err := WriteQuery(ctx, db, c.query, path); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != viaScan.String() {
				t.Fatalf("WriteQuery wrote %d bytes unlike rows.Scan's %d", len(b), viaScan.Len())
			}
		})
	}
}

// failingWriter fails every write once it has taken limit bytes.
type failingWriter struct{ n, limit int }

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.n+len(b) > f.limit {
		return 0, errors.New("disk full")
	}
	f.n += len(b)
	return len(b), nil
}

// TestArrowWriteErrorStops: a write that fails midway (a full disk) stops
// the reading and the workers and is the error returned, whichever batch
// it meets; none of them is left blocked.
func TestArrowWriteErrorStops(t *testing.T) {
	ctx := context.Background()
	db := memDB(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE rows_big AS SELECT i AS n, 'row ' || i AS label FROM range("+strconv.Itoa(3*readChunk)+") t(i)"); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 10, 100_000, 3_000_000} {
		_, err := writeArrow(ctx, conn, tableSource("rows_big"), &failingWriter{limit: limit})
		if err == nil || err.Error() != "disk full" {
			t.Errorf("limit %d: %v, want the writer's error", limit, err)
		}
	}
}

// TestWriteFromTable: a file read straight from its table (File.Table)
// has the bytes of the same query through a temp copy, for a table of
// several pieces whose rows were inserted out of any order, a range of
// them deleted and more inserted after (rowids that neither start at 0 nor
// run without a gap), through Arrow and through rows.Scan, and for an
// empty table; a query that is not a scan of its table alone is refused.
func TestWriteFromTable(t *testing.T) {
	ctx := context.Background()
	db := memDB(t, "SET threads = 4")
	n := 3*readChunk + 5
	for _, q := range []string{
		"CREATE TABLE t (i BIGINT, s VARCHAR, h HUGEINT)",
		"CREATE TABLE empty_t (i BIGINT, s VARCHAR)",
		"INSERT INTO t SELECT i, CASE WHEN i % 9 = 0 THEN NULL ELSE '=x' || (hash(i) % 1000) END, i FROM range(" + strconv.Itoa(n) + ") r(i) ORDER BY hash(i)",
		"DELETE FROM t WHERE i % 3 = 0 OR i BETWEEN 1000 AND 200000",
		"INSERT INTO t SELECT i, 'late ' || i, -i FROM range(1000) r(i) ORDER BY i DESC",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, query, table string }{
		{"arrow", "SELECT i, s, i * 2 AS twice\nFROM t", "t"},
		{"scan", "SELECT i, s, h\nFROM t", "t"}, // HUGEINT: rows.Scan
		{"empty", "SELECT i, s\nFROM empty_t", "empty_t"},
	} {
		direct, copied := File{Name: c.name + "-direct.csv", Query: c.query, Table: c.table}, File{Name: c.name + "-copied.csv", Query: c.query}
		if err := WriteFolder(ctx, db, nil, dir, []File{direct, copied}); err != nil {
			t.Fatal(err)
		}
		a, err := os.ReadFile(filepath.Join(dir, direct.Name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, copied.Name))
		if err != nil {
			t.Fatal(err)
		}
		var want int // the table's rows and the header
		if err := db.QueryRow("SELECT count(*) + 1 FROM " + c.table).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(b), "\n"); string(a) != string(b) || lines != want {
			t.Errorf("%s: read from the table %d bytes, through a copy %d (%d lines)", c.name, len(a), len(b), lines)
		}
	}
	for _, q := range []string{"SELECT i FROM t WHERE i > 3", "SELECT i FROM t ORDER BY i", "SELECT t.i FROM t JOIN empty_t e ON e.i = t.i"} {
		if err := WriteFolder(ctx, db, nil, dir, []File{{Name: "bad.csv", Query: q, Table: "t"}}); err == nil {
			t.Errorf("%q read as a scan of t alone", q)
		}
	}
}

// memDB opens an in-memory DuckDB, closed when the test ends, and runs
// setup on it.
func memDB(t *testing.T, setup ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range setup {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db
}
