package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// stepLog records the steps a load logs (loader.timed), to check which
// duplicate search ran.
type stepLog struct {
	mu    sync.Mutex
	steps map[string]int
}

func (s *stepLog) Enabled(context.Context, slog.Level) bool { return true }
func (s *stepLog) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *stepLog) WithGroup(string) slog.Handler            { return s }
func (s *stepLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "step" {
			s.mu.Lock()
			s.steps[a.Value.String()]++
			s.mu.Unlock()
		}
		return true
	})
	return nil
}

// crossFiles writes a first big file, then small files (each under half
// of the case, so they search through ingest_case_ids) holding exact copies
// of rows of any earlier file or of earlier lines of their own, rows that
// share a request_id with an earlier row but not its values (conflicts),
// copies of those, and new rows; a bad line sends some to the checked
// path. It returns the files in load order, each as its rows.
func crossFiles(t *testing.T, dir string) ([]string, [][]rec) {
	rnd := rand.New(rand.NewSource(14))
	var files [][]rec
	var all []rec
	next := 0
	fresh := func() rec {
		next++
		return row(fmt.Sprintf("x%d", next), "2026-09-01T10:00:00Z", next)
	}
	first := make([]rec, 0, 3000)
	for i := 0; i < 3000; i++ {
		first = append(first, fresh())
	}
	files = append(files, first)
	all = append(all, first...)
	for f := 1; f < 9; f++ {
		var rows []rec
		for i := 0; i < 150; i++ {
			var r rec
			switch x := rnd.Intn(10); {
			case x < 2: // an exact copy of an earlier row, in any file
				r = all[rnd.Intn(len(all))]
			case x < 3 && len(rows) > 0: // a copy of an earlier line of this file
				r = rows[rnd.Intn(len(rows))]
			case x < 5: // a conflict: same request_id, other values
				r = rec{}
				for k, v := range all[rnd.Intn(len(all))] {
					r[k] = v
				}
				r["prompt_tokens"] = 100000 + rnd.Intn(3)
			default:
				r = fresh()
			}
			rows = append(rows, r)
		}
		files = append(files, rows)
		all = append(all, rows...)
	}
	var paths []string
	for f, rows := range files {
		name, body := fmt.Sprintf("part-%02d.jsonl", f), jsonl(rows...)
		if f%2 == 1 {
			name += ".gz"
		}
		if f%3 == 2 {
			body = strings.Replace(body, "\n", "\n{cut\n", 1) // one rejected line
		}
		paths = append(paths, writeFile(t, filepath.Join(dir, name), body))
	}
	return paths, files
}

// TestCrossFileSearchThroughCaseIDs: duplicates and conflicts across files,
// found through ingest_case_ids (built once per command, added to per
// file), are exactly those a model of the rule finds (a row equal to any
// earlier row of the case is a duplicate; a kept row is a conflict when
// another kept row of its file or an earlier one has its request_id), and
// exactly those of the search over the whole table, row for row.
func TestCrossFileSearchThroughCaseIDs(t *testing.T) {
	dir := t.TempDir()
	paths, files := crossFiles(t, dir)
	// The model, file by file.
	type want struct{ loaded, dups, conflicts int64 }
	var wants []want
	seen := map[string]bool{}
	ids := map[string]int{}
	for _, rows := range files {
		var w want
		var kept []string
		for _, r := range rows {
			j, _ := json.Marshal(r)
			if seen[string(j)] {
				w.dups++
				continue
			}
			seen[string(j)] = true
			id := r["request_id"].(string)
			ids[id]++
			kept = append(kept, id)
		}
		for _, id := range kept {
			if ids[id] > 1 {
				w.conflicts++
			}
		}
		w.loaded = int64(len(kept))
		wants = append(wants, w)
	}
	load := func(t *testing.T, noCaseIDs bool) ([]FileResult, string) {
		testNoCaseIDs = noCaseIDs
		defer func() { testNoCaseIDs = false }()
		db := openCase(t)
		steps := &stepLog{steps: map[string]int{}}
		logger := slog.New(steps)
		var frs []FileResult
		// Two commands: the second builds its table again, from the case.
		// Each names a file twice and a copy of another: skipped.
		copyPath := copyFile(t, paths[5], filepath.Join(dir, "copy", filepath.Base(paths[5])))
		for _, cmd := range [][]string{append(paths[:5:5], paths[2]), append(append([]string{}, paths[5:]...), copyPath)} {
			res, err := Run(context.Background(), db, logger, cmd, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkReconciled(t, db, res)
			frs = append(frs, res.Files...)
		}
		if noCaseIDs {
			if steps.steps["ingest_1_shared_case"] != 0 {
				t.Errorf("steps %v: ingest_case_ids used", steps.steps)
			}
		} else if steps.steps["ingest_case_ids_fill"] != 2 || steps.steps["ingest_1_shared_case"] < 6 ||
			steps.steps["ingest_2_candidates_range"] == 0 || steps.steps["ingest_1_shared"] != 0 {
			t.Errorf("steps %v: want ingest_case_ids filled once per command and the small files searched through it", steps.steps)
		}
		var b strings.Builder
		rows, err := db.Query(`SELECT row_id, request_id, prompt_tokens, file_id, line FROM requests ORDER BY row_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var rid, p, f, l int64
			var id string
			if err := rows.Scan(&rid, &id, &p, &f, &l); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, rid, id, p, f, l)
		}
		return frs, b.String()
	}
	got, gotRows := load(t, false)
	var loaded []FileResult
	for _, fr := range got {
		if !fr.AlreadyLoaded {
			loaded = append(loaded, fr)
		}
	}
	if len(loaded) != len(files) || len(got) != len(files)+1 {
		t.Fatalf("%d files loaded, %d results; want %d and %d", len(loaded), len(got), len(files), len(files)+1)
	}
	var dups, conflicts int64
	for i, fr := range loaded {
		w := wants[i]
		dups += w.dups
		conflicts += w.conflicts
		if fr.Loaded != w.loaded || fr.Duplicates != w.dups || fr.Conflicts != w.conflicts {
			t.Errorf("%s: loaded %d duplicates %d conflicts %d, want %d %d %d",
				filepath.Base(fr.Path), fr.Loaded, fr.Duplicates, fr.Conflicts, w.loaded, w.dups, w.conflicts)
		}
	}
	if dups < 200 || conflicts < 150 {
		t.Fatalf("the files hold too few duplicates (%d) or conflicts (%d) to test", dups, conflicts)
	}
	old, oldRows := load(t, true)
	if !reflect.DeepEqual(got, old) {
		t.Errorf("file results differ from the whole-table search:\n%+v\n%+v", got, old)
	}
	if gotRows != oldRows {
		t.Error("rows kept differ from the whole-table search")
	}
}

// copyFile copies a file's bytes: the same SHA-256 under another path.
func copyFile(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestCaseIDsAcrossRecordFiles: a record file between two canonical files
// of one command gives the session's connection back, and with it the TEMP
// table ingest_case_ids; the next canonical file builds the table again and
// still finds its duplicates and conflicts across the case.
func TestCaseIDsAcrossRecordFiles(t *testing.T) {
	dir := t.TempDir()
	var big []rec
	for i := 0; i < 3000; i++ {
		big = append(big, row(fmt.Sprintf("b%d", i), "2026-09-01T10:00:00Z", i+1))
	}
	db := openCase(t)
	run(t, db, []string{writeFile(t, filepath.Join(dir, "big.jsonl"), jsonl(big...))}, Options{})

	a := []rec{row("a1", "2026-09-01T11:00:00Z", 7), big[10]}
	conflict := row("b20", "2026-09-01T10:00:00Z", 99999) // big[20]'s request_id, other values
	b := []rec{a[0], conflict, row("n1", "2026-09-01T12:00:00Z", 8)}
	payload := `{"id":"chatcmpl-5fda01","call_type":"acompletion","status":"success","total_tokens":20,"prompt_tokens":12,"completion_tokens":8,"startTime":1788336843.512,"endTime":1788336849.901,"model":"glm-5.3","metadata":{"user_api_key_team_id":"team-acme"},"messages":[],"response":{}}`
	steps := &stepLog{steps: map[string]int{}}
	res, err := RunSources(context.Background(), db, slog.New(steps), []Source{
		{Paths: []string{writeFile(t, filepath.Join(dir, "a.jsonl"), jsonl(a...))}, Keys: SourceKeys{Label: "a"}},
		{Paths: []string{writeFile(t, filepath.Join(dir, "payloads.jsonl"), payload+"\n")}, Layout: "litellm-payload", Keys: SourceKeys{Label: "gw"}},
		{Paths: []string{writeFile(t, filepath.Join(dir, "b.jsonl"), jsonl(b...))}, Keys: SourceKeys{Label: "b"}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkReconciled(t, db, res)
	if steps.steps["ingest_case_ids_fill"] != 2 {
		t.Errorf("steps %v: want ingest_case_ids filled twice (before and after the record file)", steps.steps)
	}
	got := map[string][3]int64{}
	for _, fr := range res.Files {
		got[filepath.Base(fr.Path)] = [3]int64{fr.Loaded, fr.Duplicates, fr.Conflicts}
	}
	// a: big[10] is a duplicate. b: a's first row is a duplicate, b20 a
	// conflict with big.jsonl's row (both kept rows count), n1 new.
	want := map[string][3]int64{"a.jsonl": {1, 1, 0}, "payloads.jsonl": {1, 0, 0}, "b.jsonl": {2, 1, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loaded, duplicates, conflicts per file: %v, want %v", got, want)
	}
}
