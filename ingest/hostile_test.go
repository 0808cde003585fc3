package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	kgzip "github.com/klauspost/compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// rejects lists "line reason-prefix raw-length" for a case's rejected rows.
func rejects(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT line, reason, length(raw) FROM rejected_rows ORDER BY file_id, line")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line, n int64
		var reason string
		if err := rows.Scan(&line, &reason, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %d", line, reason, n))
	}
	return out
}

// TestLongLinesRejected: a line (a CSV record) over --max-line-bytes is
// rejected with its line, its first 4 KiB kept, on the fast path, the
// checked path and for CSV; the rows around it load.
func TestLongLinesRejected(t *testing.T) {
	const max = 2000
	long := strings.Repeat("x", 10_000)
	good := jsonl(row("a1", "2026-09-01T10:00:00Z", 10))
	after := jsonl(row("a3", "2026-09-01T10:00:02Z", 10))
	jl := good + `{"request_id":"a2","ts":"2026-09-01T10:00:01Z","tenant_id":"t","model":"m","prompt_tokens":1,"prompt_text":"` + long + "\"}\r\n" + after
	want := []string{"2 line of 10110 bytes is longer than --max-line-bytes 2000: not read (its first 4096 bytes are kept) 4096"}
	csvText := "request_id,ts,tenant_id,model,prompt_tokens,prompt_text\n" +
		"c1,2026-09-01T10:00:00Z,t,m,1,short\n" +
		"c2,2026-09-01T10:00:01Z,t,m,1," + long + "\n" +
		"c3,2026-09-01T10:00:02Z,t,m,1,\"" + strings.Repeat("many lines\n", 300) + "\"\n" +
		"c4,2026-09-01T10:00:03Z,t,m,1,short\n"
	for _, c := range []struct {
		name, file, content string
		force               bool
		want                []string
		loaded              int64
	}{
		{"fast path", "a.jsonl", jl, false, want, 2},
		{"checked path", "a.jsonl", jl, true, want, 2},
		{"gzip", "a.jsonl.gz", jl, false, want, 2},
		{"csv", "a.csv", csvText, false, []string{
			"3 line of 10030 bytes is longer than --max-line-bytes 2000: not read (its first 4096 bytes are kept) 4096",
			"4 line of 3332 bytes is longer than --max-line-bytes 2000: not read (its first 4096 bytes are kept) 3332"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			testForceChecked = c.force
			defer func() { testForceChecked = false }()
			db := openCase(t)
			res := run(t, db, []string{writeFile(t, filepath.Join(t.TempDir(), c.file), c.content)}, Options{MaxLineBytes: max})
			if got := rejects(t, db); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("rejected:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if res.Loaded != c.loaded {
				t.Errorf("loaded %d, want %d", res.Loaded, c.loaded)
			}
		})
	}
}

// writeBomb writes a .gz holding a good line, one line of size bytes, and
// another good line, without holding the big line in memory.
func writeBomb(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := kgzip.NewWriterLevel(f, kgzip.BestSpeed)
	zw.Write([]byte(jsonl(row("b1", "2026-09-01T10:00:00Z", 10))))
	zw.Write([]byte(`{"request_id":"big","ts":"2026-09-01T10:00:01Z","tenant_id":"t","model":"m","prompt_tokens":1,"prompt_text":"`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for n := int64(0); n < size; n += int64(len(chunk)) {
		zw.Write(chunk)
	}
	zw.Write([]byte("\"}\n" + jsonl(row("b3", "2026-09-01T10:00:02Z", 10))))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestLongLineInBoundedMemory: a 4 MB .gz holding one 4 GiB line is
// loaded in a child process capped at 6 GiB of address space: the line is
// rejected with its line number, the lines around it load, and the child's
// peak RSS (its rusage) stays far below the line's size (before the bound,
// the checked path read the line whole: killed at a 6 GB cap).
func TestLongLineInBoundedMemory(t *testing.T) {
	if path := os.Getenv("LEAKMAP_LONG_LINE_LOG"); path != "" {
		db := openCase(t)
		res, err := Run(context.Background(), db, nil, []string{path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("loaded=%d rejected=%d %s\n", res.Loaded, res.Rejected, strings.Join(rejects(t, db), "; "))
		return
	}
	if testing.Short() {
		t.Skip("writes and reads a 4 GiB line")
	}
	path := filepath.Join(t.TempDir(), "bomb.jsonl.gz")
	writeBomb(t, path, 4<<30)
	st, _ := os.Stat(path)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -v 6291456 && exec "$0" -test.run '^TestLongLineInBoundedMemory$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "LEAKMAP_LONG_LINE_LOG="+path)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // MB
	t.Logf("%d-byte .gz with a 4 GiB line: %s, peak RSS %d MB", st.Size(), took.Round(time.Millisecond), rss)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "loaded=2 rejected=1 2 line of 4294967407 bytes is longer than --max-line-bytes 67108864") {
		t.Fatalf("child said:\n%s", out)
	}
	if rss > 700 {
		t.Errorf("peak RSS %d MB for a 4 GiB line: not bounded", rss)
	}
}

// TestTruncatedCompressedFile: a .gz (or .zst) cut short between two good
// files: the rows before the break load, the cut line is rejected as
// "truncated gzip stream", the files after it load, and the run ends with
// an input error (exit 3) naming the file; a rerun, which skips the file as
// already loaded, says so again.
func TestTruncatedCompressedFile(t *testing.T) {
	gen := func(prefix string, csvText bool) string {
		var b strings.Builder
		if csvText {
			b.WriteString("request_id,ts,tenant_id,model,prompt_tokens,prompt_text\n")
		}
		for i := range 2000 {
			text := fmt.Sprintf("prompt %d with some words that do not compress away %d", i, i*7919)
			if csvText {
				fmt.Fprintf(&b, "%s%04d,2026-09-01T10:00:00Z,t,glm-5.3,%d,%s\n", prefix, i, i, text)
				continue
			}
			r := row(fmt.Sprintf("%s%04d", prefix, i), "2026-09-01T10:00:00Z", i)
			r["prompt_text"] = text
			b.WriteString(jsonl(r))
		}
		return b.String()
	}
	for _, c := range []struct{ name, ext, comp string }{
		{"gzip jsonl", "jsonl.gz", "gzip"},
		{"zstd jsonl", "jsonl.zst", "zstd"},
		{"gzip csv", "csv.gz", "gzip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			csvText := strings.HasPrefix(c.ext, "csv")
			a := writeFile(t, filepath.Join(dir, "a."+c.ext), gen("a", csvText))
			b := writeFile(t, filepath.Join(dir, "b."+c.ext), gen("b", csvText))
			data, _ := os.ReadFile(b)
			os.WriteFile(b, data[:len(data)*6/10], 0o644)
			last := writeFile(t, filepath.Join(dir, "c."+c.ext), gen("c", csvText))
			damage := "truncated " + c.comp + " stream"
			fb, reason, line := damagedBetween(t, [3]string{a, b, last}, Options{}, 2000,
				func(err error) bool { return errors.Is(err, errs.ErrInput) }, damage+")")
			if fb.Loaded < 100 || fb.Loaded >= 2000 || fb.Rejected != 1 || fb.Damage != damage {
				t.Errorf("truncated file: %+v", fb)
			}
			if reason != damage {
				t.Errorf("rejected row: %q", reason)
			}
			header := int64(0)
			if csvText {
				header = 1
			}
			if line != fb.Loaded+1+header {
				t.Errorf("the cut line is %d, want %d (after the %d rows loaded)", line, fb.Loaded+1+header, fb.Loaded)
			}
		})
	}
}

// TestDeepNestingSameOnBothPaths: a field nested 200,000 deep is rejected
// on the fast path as on the checked path (DuckDB's reader loaded it,
// encoding/json refused it), with the same reason; one nested 999 deep, or
// a text holding thousands of brackets, loads on both.
func TestDeepNestingSameOnBothPaths(t *testing.T) {
	line := func(id, extra string) string {
		return `{"request_id":"` + id + `","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":1,"extra":` + extra + "}\n"
	}
	content := line("ok1", "1") +
		line("deep", strings.Repeat("[", 200_000)+strings.Repeat("]", 200_000)) +
		line("shallow", strings.Repeat("[", maxJSONDepth-1)+strings.Repeat("]", maxJSONDepth-1)) +
		line("text", `{"prompt":"`+strings.Repeat("[{", 5000)+`"}`) +
		line("ok2", "2")
	var dumps, rejected []string
	for _, force := range []bool{false, true} {
		testForceChecked = force
		db := openCase(t)
		res := run(t, db, []string{writeFile(t, filepath.Join(t.TempDir(), "deep.jsonl"), content)}, Options{})
		testForceChecked = false
		if res.Loaded != 4 || res.Rejected != 1 {
			t.Errorf("forced checked %v: loaded %d rejected %d, want 4 and 1", force, res.Loaded, res.Rejected)
		}
		dumps = append(dumps, canonicalDump(t, db))
		rejected = append(rejected, strings.Join(rejects(t, db), "\n"))
	}
	if dumps[0] != dumps[1] || rejected[0] != rejected[1] {
		t.Errorf("the paths disagree:\nfast: %s\n%s\nchecked: %s\n%s", dumps[0], rejected[0], dumps[1], rejected[1])
	}
	if want := "2 not JSON: nested more than 1000 levels deep 400104"; rejected[0] != want {
		t.Errorf("rejected %q, want %q", rejected[0], want)
	}
}
