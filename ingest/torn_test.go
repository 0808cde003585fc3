package ingest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
)

// TestTornLastLine: a plain file (or a compressed one whose stream is whole)
// that ends inside its last record, between two good files, is a damaged
// file as DESIGN.md says: its rows before the tear load, the torn line is
// rejected with a reason that says so, the other files load, and ingest
// ends with exit 3 naming it (again on a rerun, which skips the file). On
// both ingest paths. A last line that only lacks its line ending loads; a
// bad line elsewhere is an ordinary rejected row.
func TestTornLastLine(t *testing.T) {
	gen := func(prefix string, csvText bool, n int) string {
		var b strings.Builder
		if csvText {
			b.WriteString("request_id,ts,tenant_id,model,prompt_tokens\n")
		}
		for i := range n {
			if csvText {
				fmt.Fprintf(&b, "%s%04d,2026-09-01T10:00:00Z,t,glm-5.3,%d\n", prefix, i, i+1)
				continue
			}
			b.WriteString(jsonl(row(fmt.Sprintf("%s%04d", prefix, i), "2026-09-01T10:00:00Z", i+1)))
		}
		return b.String()
	}
	tear := func(s string) string { return s[:len(s)-12] } // inside the last record, no line ending
	for _, c := range []struct {
		name, ext string
		checked   bool
		opts      Options
	}{
		{"jsonl fast path", "jsonl", false, Options{}},
		{"jsonl checked path", "jsonl", true, Options{}},
		{"jsonl.gz, whole stream", "jsonl.gz", false, Options{}},
		{"csv", "csv", false, Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(v bool) { testForceChecked = v }(testForceChecked)
			testForceChecked = c.checked
			dir := t.TempDir()
			isCSV := c.ext == "csv"
			a := writeFile(t, filepath.Join(dir, "a."+c.ext), gen("a", isCSV, 300))
			b := writeFile(t, filepath.Join(dir, "b."+c.ext), tear(gen("b", isCSV, 300)))
			last := writeFile(t, filepath.Join(dir, "c."+c.ext), gen("c", isCSV, 300))
			fb, reason, line := damagedBetween(t, [3]string{a, b, last}, c.opts, 300,
				func(err error) bool { return errs.ExitCode(err) == 3 }, "torn last line")
			if fb.Loaded != 299 || fb.Rejected != 1 || fb.Damage != "torn last line" {
				t.Errorf("torn file: %+v", fb)
			}
			if !strings.HasPrefix(reason, tornLastLine+": ") {
				t.Errorf("rejected row: %q", reason)
			}
			header := int64(0)
			if isCSV {
				header = 1
			}
			if line != 300+header {
				t.Errorf("torn line at %d, want %d", line, 300+header)
			}
		})
	}

	// Not damage: a good last line without its line ending, and a bad line
	// (terminated) that is not the last, or the last one terminated.
	for _, c := range []struct {
		name, body     string
		loaded, reject int64
	}{
		{"unterminated good last line", strings.TrimSuffix(gen("u", false, 50), "\n"), 50, 0},
		{"bad line in the middle", gen("m", false, 20) + "{\"request_id\":\"m-x\",\"ts\n" + gen("n", false, 20), 40, 1},
		{"bad last line, terminated", gen("t", false, 20) + "{\"request_id\":\"t-x\",\"ts\n", 20, 1},
	} {
		for _, checked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s checked=%t", c.name, checked), func(t *testing.T) {
				defer func(v bool) { testForceChecked = v }(testForceChecked)
				testForceChecked = checked
				p := writeFile(t, filepath.Join(t.TempDir(), "x.jsonl"), c.body)
				db := openCase(t)
				res := run(t, db, []string{p}, Options{})
				if res.Loaded != c.loaded || res.Rejected != c.reject || res.Files[0].Damage != "" {
					t.Errorf("%+v, want loaded %d rejected %d, no damage", res.Files[0], c.loaded, c.reject)
				}
			})
		}
	}
}

// TestCutDocument: a whole-document JSON file (a Cloudflare API page,
// pretty-printed or on one line) cut mid-way is accounted for: one rejected
// row at the document's line saying it is cut, the file damaged (exit 3,
// named), the files after it loaded.
func TestCutDocument(t *testing.T) {
	compact := strings.Join(strings.Fields(strings.ReplaceAll(cloudflarePage, "\n", " ")), " ")
	for _, c := range []struct {
		name, body, reason string
		loaded, line       int64
	}{
		{"pretty page cut mid-line", cloudflarePage[:len(cloudflarePage)/2], truncatedDocument, 0, 1},
		{"pretty page cut at a line end", cloudflarePage[:strings.Index(cloudflarePage, `      "tokens_in": 10,`)], truncatedDocument, 0, 1},
		{"one-line page cut", compact[:len(compact)/2], tornLastLine, 0, 1},
		{"second page of a file cut", compact + "\n" + compact[:len(compact)*2/3], tornLastLine, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cut := writeFile(t, filepath.Join(dir, "page-1.json"), c.body)
			good := writeFile(t, filepath.Join(dir, "page-2.json"), strings.ReplaceAll(cloudflarePage, "01J8ZK3V6Q9T", "01J8ZK3V6Q9X"))
			db := openCase(t)
			res, err := Run(context.Background(), db, nil, []string{cut, good}, Options{Preset: "cloudflare-aigw", Tenant: "acct"})
			if errs.ExitCode(err) != 3 || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), cut+" (") {
				t.Fatalf("err = %v, want exit 3 naming %s", err, cut)
			}
			checkReconciled(t, db, res)
			if fc, fg := res.Files[0], res.Files[1]; fc.Loaded != c.loaded || fc.Rejected != 1 || fc.Damage == "" || fg.Loaded != 2 || fg.Damage != "" {
				t.Errorf("cut %+v, good %+v", fc, fg)
			}
			var reason string
			var line int64
			if err := db.QueryRow("SELECT reason, line FROM rejected_rows").Scan(&reason, &line); err != nil || !strings.HasPrefix(reason, c.reason) {
				t.Errorf("rejected row: %q at %d, %v; want %q", reason, line, err, c.reason)
			}
			if line != c.line {
				t.Errorf("rejected at line %d, want %d (where the cut document starts)", line, c.line)
			}
		})
	}
}
