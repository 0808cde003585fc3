package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDuckHashIsDuckDBs compares duckHash with DuckDB's own hash() of
// random texts of every length up to 80 bytes (the lengths DuckDB keeps
// inline and the word boundaries included), ASCII, accented, CJK and
// emoji, and of the probes.
func TestDuckHashIsDuckDBs(t *testing.T) {
	db := openCase(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"a", "Z", "0", "-", " ", "é", "ß", "字", "🔑", "\u0000", "\"", "\\"}
	texts := slices.Clone(duckHashProbes)
	for n := 0; n <= 80; n++ {
		for range 12 {
			var b strings.Builder
			for b.Len() < n {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			texts = append(texts, b.String())
		}
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE hash_probe (i INTEGER, s VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if _, err := conn.ExecContext(ctx, "INSERT INTO hash_probe VALUES (?, ?)", i, s); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT i, s, hash(s) FROM hash_probe ORDER BY i")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var i int
		var s string
		var want uint64
		if err := rows.Scan(&i, &s, &want); err != nil {
			t.Fatal(err)
		}
		if s != texts[i] {
			t.Fatalf("text %d came back as %q, want %q", i, s, texts[i])
		}
		if got := duckHash([]byte(s)); got != want {
			t.Errorf("duckHash(%q) = %#x, DuckDB's hash() = %#x", s, got, want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(texts) {
		t.Fatalf("%d texts hashed, want %d", n, len(texts))
	}
	if !duckHashAgrees(ctx, conn) {
		t.Error("duckHashAgrees: false on the database duckHash matches")
	}
}

// TestRepeatedHashes checks repeatedHashes against a count in a map, on
// slices small and large, with values repeated two and more times, at
// the extremes, and none at all.
func TestRepeatedHashes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 17, 1000, 300_000} {
		for _, reps := range []int{0, 1, 40} {
			hs := make([]uint64, 0, n+3*reps)
			for range n {
				hs = append(hs, r.Uint64())
			}
			for range reps {
				if len(hs) > 0 {
					hs = append(hs, hs[r.IntN(len(hs))])
				}
			}
			if n > 2 && reps > 0 {
				hs = append(hs, 0, 0, ^uint64(0), ^uint64(0), ^uint64(0))
			}
			r.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
			count := map[uint64]int{}
			for _, h := range hs {
				count[h]++
			}
			var want []uint64
			for h, c := range count {
				if c > 1 {
					want = append(want, h)
				}
			}
			slices.Sort(want)
			var ib idBuckets
			for rest := hs; len(rest) > 0; {
				k := min(len(rest), 1+r.IntN(5000))
				ib.add(rest[:k])
				rest = rest[k:]
			}
			if ib.n != len(hs) {
				t.Fatalf("%d held, want %d", ib.n, len(hs))
			}
			got := ib.repeated()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("n=%d reps=%d: %d repeated values, want %d", n, reps, len(got), len(want))
			}
		}
	}
}

// TestFirstFileSharedIDsFromGoReader: a first file's duplicates and
// conflicts found from the request_id hashes the Go reader made are the
// ones the SQL search finds and the ones a model of the rule counts, row
// for row; the search reads no id back (ingest_1_shared_only does not run).
func TestFirstFileSharedIDsFromGoReader(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	var rows []rec
	for i := range 4000 {
		var x rec
		switch k := r.IntN(20); {
		case k < 2 && len(rows) > 0: // an exact copy of an earlier line
			x = rows[r.IntN(len(rows))]
		case k < 4 && len(rows) > 0: // a conflict: an earlier id, other values
			x = rec{}
			for key, v := range rows[r.IntN(len(rows))] {
				x[key] = v
			}
			x["prompt_tokens"] = 100000 + r.IntN(3)
		case k < 5: // one id, over and over, with two sets of values
			x = row("hot", "2026-09-01T10:00:00Z", 1+r.IntN(2))
		default:
			x = row(fmt.Sprintf("chatcmpl-%032x", i), "2026-09-01T10:00:00Z", i+1)
		}
		rows = append(rows, x)
	}
	seen := map[string]bool{}
	ids := map[string]int{}
	var kept []string
	var wantDups int64
	for _, x := range rows {
		j, _ := json.Marshal(x)
		if seen[string(j)] {
			wantDups++
			continue
		}
		seen[string(j)] = true
		ids[x["request_id"].(string)]++
		kept = append(kept, x["request_id"].(string))
	}
	var wantConflicts int64
	for _, id := range kept {
		if ids[id] > 1 {
			wantConflicts++
		}
	}
	if wantDups < 200 || wantConflicts < 200 {
		t.Fatalf("too few duplicates (%d) or conflicts (%d) to test", wantDups, wantConflicts)
	}
	body := strings.Replace(jsonl(rows...), "\n", "\n{cut\n", 1) // one rejected line
	for _, name := range []string{"first.jsonl", "first.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), name), body)
			load := func(noIDSearch bool) (FileResult, string, map[string]int) {
				testNoIDSearch = noIDSearch
				defer func() { testNoIDSearch = false }()
				db := openCase(t)
				steps := &stepLog{steps: map[string]int{}}
				res, err := Run(context.Background(), db, slog.New(steps), []string{path}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				checkReconciled(t, db, res)
				var b strings.Builder
				q, err := db.Query(`SELECT row_id, request_id, prompt_tokens, line FROM requests ORDER BY row_id`)
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()
				for q.Next() {
					var rid, p, l int64
					var id string
					if err := q.Scan(&rid, &id, &p, &l); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintln(&b, rid, id, p, l)
				}
				return res.Files[0], b.String(), steps.steps
			}
			before := testIDSearches
			got, gotRows, steps := load(false)
			if testIDSearches != before+1 || steps["ingest_1_shared_ids"] != 1 || steps["ingest_1_shared_only"] != 0 || steps["ingest_arrow_0_insert"] != 1 {
				t.Errorf("steps %v: want the Go reader and its hashes searched, not the ids read back", steps)
			}
			if got.Loaded != int64(len(kept)) || got.Duplicates != wantDups || got.Conflicts != wantConflicts || got.Rejected != 1 {
				t.Errorf("loaded %d duplicates %d conflicts %d rejected %d, want %d %d %d 1",
					got.Loaded, got.Duplicates, got.Conflicts, got.Rejected, len(kept), wantDups, wantConflicts)
			}
			sql, sqlRows, steps := load(true)
			if steps["ingest_1_shared_only"] != 1 {
				t.Errorf("steps %v: want the SQL search", steps)
			}
			got.Path, sql.Path = "", ""
			if !reflect.DeepEqual(got, sql) {
				t.Errorf("file results differ from the SQL search:\n%+v\n%+v", got, sql)
			}
			if gotRows != sqlRows {
				t.Error("rows kept differ from the SQL search")
			}
		})
	}
}

// BenchmarkRepeatedHashes: a first file of 5M rows' hashes, held chunk by
// chunk of 16,384 as the Go reader hands them over, then searched; one
// value repeated.
func BenchmarkRepeatedHashes(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var parts [][]uint64
	for n := 0; n < 5_000_000; n += 1 << 14 {
		p := make([]uint64, 1<<14)
		for i := range p {
			p[i] = r.Uint64()
		}
		p[0] = 42 // one id in every chunk
		parts = append(parts, p)
	}
	for b.Loop() {
		var ib idBuckets
		for _, p := range parts {
			ib.add(p)
		}
		if rep := ib.repeated(); len(rep) != 1 {
			b.Fatalf("%d repeated, want 1", len(rep))
		}
	}
}
