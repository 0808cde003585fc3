package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
