package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/errs"
)

// TestSymlinkedFolderLoads is the Kubernetes layout: /var/log/containers
// holds links into /var/log/pods. Given the folder of links, every log loads;
// a link loop is walked once; two links to one file load it once; a dangling
// link is reported as skipped.
func TestSymlinkedFolderLoads(t *testing.T) {
	root := t.TempDir()
	pods := filepath.Join(root, "pods")
	a := writeFile(t, filepath.Join(pods, "ns_a_1", "app", "0.log"), jsonl(row("a1", "2026-09-01T10:00:00Z", 10), row("a2", "2026-09-01T10:00:01Z", 10)))
	b := writeFile(t, filepath.Join(pods, "ns_b_2", "app", "0.log"), jsonl(row("b1", "2026-09-01T10:00:02Z", 10)))
	containers := filepath.Join(root, "containers")
	if err := os.MkdirAll(containers, 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"a_ns_app-1.log":  a,
		"b_ns_app-2.log":  b,
		"b-again.log":     b,                                    // a second link to one file
		"loop":            containers,                           // a loop
		"gone_ns_app.log": filepath.Join(pods, "gone", "0.log"), // dangling
		"pods":            pods,                                 // a folder link: its files are the same files
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(containers, name)); err != nil {
			t.Fatal(err)
		}
	}
	db := openCase(t)
	res := run(t, db, []string{containers}, Options{})
	if len(res.Files) != 2 || res.Loaded != 3 {
		t.Fatalf("files %d loaded %d, want 2 files and 3 rows: %+v", len(res.Files), res.Loaded, res.Files)
	}
	for _, f := range res.Files {
		if !strings.HasPrefix(f.Path, containers) {
			t.Errorf("recorded as %s: want the path under the folder given", f.Path)
		}
	}
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Path, "gone_ns_app.log") {
		t.Errorf("skipped %+v, want the dangling link", res.Skipped)
	}
	if n := count(t, db, "SELECT count(*) FROM ingest_files"); n != 2 {
		t.Errorf("ingest_files: %d rows, want 2", n)
	}
}

// TestNothingToLoadIsAnInputError: a folder (or a folder of folders) with no
// file must stop the run, never report "files 0" and go on.
func TestNothingToLoadIsAnInputError(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	hidden := filepath.Join(root, "hidden")
	nested := filepath.Join(root, "nested", "deeper")
	for _, d := range []string{empty, hidden, nested} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(hidden, ".rotated.log"), jsonl(row("h1", "2026-09-01T10:00:00Z", 1)))
	good := writeFile(t, filepath.Join(root, "good.log"), jsonl(row("g1", "2026-09-01T10:00:00Z", 1)))
	for _, arg := range []string{empty, hidden, filepath.Join(root, "nested"), filepath.Join(root, "nested", "*")} {
		t.Run(filepath.Base(arg), func(t *testing.T) {
			db := openCase(t)
			_, err := Run(context.Background(), db, nil, []string{good, arg}, Options{})
			if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), arg) {
				t.Fatalf("err = %v, want an input error naming %s", err, arg)
			}
			if n := count(t, db, "SELECT count(*) FROM ingest_files"); n != 0 {
				t.Errorf("%d files recorded, want none", n)
			}
		})
	}
}

// TestDuplicateCopiesScaleLinearly loads one row written 20,000 and 160,000
// times (at-least-once shipping replaying a stuck buffer): duplicate
// detection must take time linear in the copies (ratio near 8), not
// quadratic (64; 20k copies took 11.6 s, 160k over 300 s). The same holds
// for conflicts: one request_id on as many rows with other values.
func TestDuplicateCopiesScaleLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("times four loads")
	}
	copies := func(n int) string { return strings.Repeat(jsonl(row("same", "2026-09-01T10:00:00Z", 10)), n) }
	conflicts := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(jsonl(row("same", "2026-09-01T10:00:00Z", i)))
		}
		return b.String()
	}
	for _, c := range []struct {
		name     string
		content  func(int) string
		loaded   func(int) int64
		dup      func(int) int64
		conflict func(int) int64
	}{
		{"copies", copies, func(int) int64 { return 1 }, func(n int) int64 { return int64(n - 1) }, func(int) int64 { return 0 }},
		{"conflicts", conflicts, func(n int) int64 { return int64(n) }, func(int) int64 { return 0 }, func(n int) int64 { return int64(n) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			took := map[int]time.Duration{}
			for _, n := range []int{20_000, 160_000} {
				path := writeFile(t, filepath.Join(t.TempDir(), "copies.jsonl"), c.content(n))
				db := openCase(t)
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				start := time.Now()
				res, err := Run(ctx, db, nil, []string{path}, Options{})
				took[n] = time.Since(start)
				cancel()
				if err != nil {
					t.Fatalf("%d rows: %v (after %s)", n, err, took[n])
				}
				if res.Loaded != c.loaded(n) || res.Duplicates != c.dup(n) || res.Conflicts != c.conflict(n) {
					t.Fatalf("%d rows: loaded %d duplicates %d conflicts %d", n, res.Loaded, res.Duplicates, res.Conflicts)
				}
			}
			ratio := float64(took[160_000]) / float64(took[20_000])
			t.Logf("20k rows %s, 160k rows %s, ratio %.1f", took[20_000].Round(time.Millisecond), took[160_000].Round(time.Millisecond), ratio)
			if ratio > 24 {
				t.Errorf("ratio %.1f: not linear in the rows of one request_id", ratio)
			}
		})
	}
}

// TestHostileMappingFileRefused: a mapping file nested 200,000 deep (the
// YAML parser's time grows with the square of the depth) is refused at
// once as a usage error.
func TestHostileMappingFileRefused(t *testing.T) {
	dir := t.TempDir()
	log := writeFile(t, filepath.Join(dir, "a.jsonl"), jsonl(row("a1", "2026-09-01T10:00:00Z", 10)))
	mapping := filepath.Join(dir, "mapping.yaml")
	os.WriteFile(mapping, []byte("fields: {request_id: "+strings.Repeat("[", 200_000)+strings.Repeat("]", 200_000)+"}\n"), 0o644)
	start := time.Now()
	_, err := Run(context.Background(), openCase(t), nil, []string{log}, Options{MappingFile: mapping})
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("err = %v, want a usage error about nesting", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refused after %s", took)
	}
}
