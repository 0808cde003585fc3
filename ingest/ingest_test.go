package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/queries"
)

// openCase opens a fresh case database file.
func openCase(t testing.TB) *sql.DB {
	t.Helper()
	db, err := casedb.Open(context.Background(), filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// writeFile writes content, compressed by the name's extension (.gz, .zst).
func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	switch {
	case strings.HasSuffix(path, ".gz"):
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(content))
		zw.Close()
	case strings.HasSuffix(path, ".zst"):
		zw, _ := zstd.NewWriter(&b)
		zw.Write([]byte(content))
		zw.Close()
	default:
		b.WriteString(content)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rec is a canonical row for building test logs.
type rec map[string]any

func jsonl(rows ...rec) string {
	var b strings.Builder
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func row(id string, ts string, prompt int) rec {
	return rec{"request_id": id, "ts": ts, "tenant_id": "t-" + id, "model": "glm-5.3",
		"prompt_tokens": prompt, "completion_tokens": 7, "status": 200,
		"prefill_instance": "p1", "decode_instance": "d1"}
}

// run loads paths and checks the reconciliation identity per file and in
// total, in the Result and in the database.
func run(t *testing.T, db *sql.DB, paths []string, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), db, nil, paths, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkReconciled(t, db, res)
	return res
}

// runLogged is run with a debug logger; it returns what was logged.
func runLogged(t *testing.T, db *sql.DB, paths []string, opts Options) (*Result, string) {
	t.Helper()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	res, err := Run(context.Background(), db, logger, paths, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkReconciled(t, db, res)
	return res, logs.String()
}

// damagedBetween ingests a damaged file between two good ones twice: both
// runs must fail as wantErr says (the damaged file named in it), the second
// skipping the damaged file as loaded; on the first, every file is
// reconciled and the good ones loaded good rows each, undamaged. It
// returns the damaged file's result and its one rejected row, for the
// caller's own checks.
func damagedBetween(t *testing.T, files [3]string, opts Options, good int64, wantErr func(error) bool, want string) (damaged FileResult, reason string, line int64) {
	t.Helper()
	db := openCase(t)
	for pass := 1; pass <= 2; pass++ {
		res, err := Run(context.Background(), db, nil, files[:], opts)
		if !wantErr(err) || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), files[1]+" ("+want) {
			t.Fatalf("pass %d: err = %v, want it to name %s (%s", pass, err, files[1], want)
		}
		if len(res.Files) != 3 {
			t.Fatalf("pass %d: %d files", pass, len(res.Files))
		}
		if pass == 2 {
			if !res.Files[1].AlreadyLoaded || res.Files[1].Damage == "" {
				t.Errorf("rerun: %+v", res.Files[1])
			}
			break
		}
		checkReconciled(t, db, res)
		fa, fc := res.Files[0], res.Files[2]
		if fa.Loaded != good || fc.Loaded != good || fa.Damage != "" || fc.Damage != "" {
			t.Errorf("good files: %+v %+v", fa, fc)
		}
		damaged = res.Files[1]
		if err := db.QueryRow("SELECT reason, line FROM rejected_rows").Scan(&reason, &line); err != nil {
			t.Errorf("rejected row: %v", err)
		}
	}
	return damaged, reason, line
}

func checkReconciled(t *testing.T, db *sql.DB, res *Result) {
	t.Helper()
	var sum Result
	for _, f := range res.Files {
		if f.Read != f.Loaded+f.Rejected+f.Duplicates {
			t.Errorf("%s: read %d != loaded %d + rejected %d + duplicates %d", f.Path, f.Read, f.Loaded, f.Rejected, f.Duplicates)
		}
		sum.Read += f.Read
		sum.Loaded += f.Loaded
		sum.Rejected += f.Rejected
		sum.Duplicates += f.Duplicates
	}
	if sum.Read != res.Read || sum.Loaded != res.Loaded || sum.Rejected != res.Rejected || sum.Duplicates != res.Duplicates {
		t.Errorf("totals %+v do not add up the files %+v", res, sum)
	}
	if res.Read != res.Loaded+res.Rejected+res.Duplicates {
		t.Errorf("total: read %d != loaded %d + rejected %d + duplicates %d", res.Read, res.Loaded, res.Rejected, res.Duplicates)
	}
	// The ledger agrees with the tables, file by file.
	rows, err := db.Query(`SELECT f.path, f.rows_read, f.rows_loaded, f.rows_rejected, f.rows_duplicate,
	        (SELECT count(*) FROM requests r WHERE r.file_id = f.file_id AND NOT EXISTS (SELECT 1 FROM request_sources j WHERE j.row_id = r.row_id))
	          + (SELECT count(*) FROM source_records s WHERE s.file_id = f.file_id),
	        (SELECT count(*) FROM rejected_rows x WHERE x.file_id = f.file_id)
	    FROM ingest_files f`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var path string
		var read, loaded, rejected, dup, inReq, inRej int64
		if err := rows.Scan(&path, &read, &loaded, &rejected, &dup, &inReq, &inRej); err != nil {
			t.Fatal(err)
		}
		if read != loaded+rejected+dup || loaded != inReq || rejected != inRej {
			t.Errorf("ledger %s: read %d loaded %d rejected %d dup %d; requests %d rejected_rows %d", path, read, loaded, rejected, dup, inReq, inRej)
		}
	}
	var dupRowIDs int64
	if err := db.QueryRow(`SELECT count(*) - count(DISTINCT row_id) FROM requests`).Scan(&dupRowIDs); err != nil {
		t.Fatal(err)
	}
	if dupRowIDs != 0 {
		t.Errorf("%d row_ids not unique", dupRowIDs)
	}
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// canonicalDump lists requests as text, times in UTC, for comparisons.
func canonicalDump(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT request_id, rfc3339(ts), coalesce(rfc3339(end_ts), '-'), tenant_id, model, prompt_tokens,
	    coalesce(completion_tokens::VARCHAR, '-'), coalesce(status::VARCHAR, '-'), coalesce(prefill_instance, '-'),
	    coalesce(decode_instance, '-'), coalesce(prompt_text, '-'), coalesce(response_text, '-')
	    FROM requests ORDER BY request_id, row_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		v := make([]string, 12)
		p := make([]any, 12)
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Join(v, "|") + "\n")
	}
	return b.String()
}

// writeParquet writes rows (canonical JSON Lines) as a Parquet file through DuckDB.
func writeParquet(t *testing.T, src, dst string) string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := fmt.Sprintf(`COPY (SELECT * FROM read_json('%s', columns = {request_id: 'VARCHAR', ts: 'TIMESTAMPTZ', end_ts: 'TIMESTAMPTZ',
	    tenant_id: 'VARCHAR', model: 'VARCHAR', prompt_tokens: 'BIGINT', completion_tokens: 'BIGINT', status: 'INTEGER',
	    prefill_instance: 'VARCHAR', decode_instance: 'VARCHAR', prompt_text: 'VARCHAR', response_text: 'VARCHAR'}))
	    TO '%s' (FORMAT parquet)`, src, dst)
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
	return dst
}

var sampleRows = []rec{
	func() rec {
		r := row("a1", "2026-09-01T10:00:00Z", 4000)
		r["end_ts"] = "2026-09-01T10:00:05.25Z"
		return r
	}(),
	func() rec {
		r := row("a2", "2026-09-01T12:00:02.123456+02:00", 900000)
		r["prompt_text"] = "hello, \"world\"\nsecond line"
		r["response_text"] = "ok"
		return r
	}(),
	func() rec { r := row("a3", "2026-09-01T05:00:03-05:00", 12); delete(r, "decode_instance"); return r }(),
}

const csvSample = `request_id,ts,end_ts,tenant_id,model,prompt_tokens,completion_tokens,status,prefill_instance,decode_instance,prompt_text,response_text
a1,2026-09-01T10:00:00Z,2026-09-01T10:00:05.25Z,t-a1,glm-5.3,4000,7,200,p1,d1,,
a2,2026-09-01T12:00:02.123456+02:00,,t-a2,glm-5.3,900000,7,200,p1,d1,"hello, ""world""
second line",ok
a3,2026-09-01T05:00:03-05:00,,t-a3,glm-5.3,12,7,200,p1,,,
`

// TestEveryFormatLoadsTheSameRows writes the same rows in every format and
// compression: each loads the same canonical rows, and loaded into one case
// every file after the first is all duplicates (the readers agree value for
// value, times compared in UTC).
func TestEveryFormatLoadsTheSameRows(t *testing.T) {
	dir := t.TempDir()
	plain := writeFile(t, filepath.Join(dir, "log.jsonl"), jsonl(sampleRows...))
	files := map[string]string{
		"jsonl":         plain,
		"jsonl.gz":      writeFile(t, filepath.Join(dir, "gz", "log.jsonl.gz"), jsonl(sampleRows...)),
		"jsonl.zst":     writeFile(t, filepath.Join(dir, "zst", "log.jsonl.zst"), jsonl(sampleRows...)),
		"no extension":  writeFile(t, filepath.Join(dir, "noext", "requests"), jsonl(sampleRows...)),
		"gzip as .log":  writeFile(t, filepath.Join(dir, "gzlog", "requests.log"), ""),
		"csv":           writeFile(t, filepath.Join(dir, "csv", "log.csv"), csvSample),
		"csv.gz":        writeFile(t, filepath.Join(dir, "csvgz", "log.csv.gz"), csvSample),
		"parquet":       writeParquet(t, plain, filepath.Join(dir, "log.parquet")),
		"jsonl bom":     writeFile(t, filepath.Join(dir, "bom", "log.jsonl"), "\xef\xbb\xbf"+jsonl(sampleRows...)),
		"jsonl crlf":    writeFile(t, filepath.Join(dir, "crlf", "log.jsonl"), strings.ReplaceAll(jsonl(sampleRows...), "\n", "\r\n")),
		"jsonl no \\n":  writeFile(t, filepath.Join(dir, "nonl", "log.jsonl"), strings.TrimSuffix(jsonl(sampleRows...), "\n")),
		"epoch numbers": "",
	}
	// A gzip file named .log: detection by content.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(jsonl(sampleRows...)))
	zw.Close()
	os.WriteFile(files["gzip as .log"], gz.Bytes(), 0o644)
	// The same instants as epoch seconds and milliseconds.
	epochRows := []rec{}
	for _, r := range sampleRows {
		c := rec{}
		for k, v := range r {
			c[k] = v
		}
		ts, _ := time.Parse(time.RFC3339Nano, r["ts"].(string))
		if r["request_id"] == "a2" {
			c["ts"] = json.Number(fmt.Sprintf("%d.%06d", ts.Unix(), ts.Nanosecond()/1000))
		} else {
			c["ts"] = ts.UnixMilli()
		}
		epochRows = append(epochRows, c)
	}
	files["epoch numbers"] = writeFile(t, filepath.Join(dir, "epoch", "log.jsonl"), jsonl(epochRows...))

	want := ""
	{
		db := openCase(t)
		run(t, db, []string{plain}, Options{})
		want = canonicalDump(t, db)
	}
	if !strings.Contains(want, "a2|2026-09-01T10:00:02.123456Z|") || !strings.Contains(want, "a3|2026-09-01T10:00:03Z|-|") {
		t.Fatalf("times not normalised to UTC:\n%s", want)
	}
	all := []string{plain}
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			db := openCase(t)
			res := run(t, db, []string{path}, Options{})
			if res.Loaded != 3 || res.Rejected != 0 {
				t.Fatalf("loaded %d rejected %d, want 3 and 0", res.Loaded, res.Rejected)
			}
			if got := canonicalDump(t, db); got != want {
				t.Errorf("rows differ from the plain JSONL load:\ngot\n%swant\n%s", got, want)
			}
		})
		if path != plain {
			all = append(all, path)
		}
	}
	db := openCase(t)
	res := run(t, db, all, Options{})
	// Files with the bytes of one already loaded (the extensionless copy,
	// a gzip identical to another) are skipped whole.
	fresh := 0
	for _, f := range res.Files {
		if !f.AlreadyLoaded {
			fresh++
		}
	}
	if fresh < 8 || res.Loaded != 3 || res.Duplicates != int64(3*(fresh-1)) {
		t.Errorf("all formats in one case: %d files loaded, %d rows loaded, %d duplicates, want 3 and %d", fresh, res.Loaded, res.Duplicates, 3*(fresh-1))
	}
	formats := map[string]bool{}
	for _, f := range res.Files {
		formats[f.Format+"/"+f.Compression] = true
	}
	for _, want := range []string{"jsonl/none", "jsonl/gzip", "jsonl/zstd", "csv/none", "csv/gzip", "parquet/none"} {
		if !formats[want] {
			t.Errorf("no file recorded as %s: %v", want, formats)
		}
	}
}

// TestBadLinesAreRejectedWithLineAndRaw: every kind of bad line is kept in
// rejected_rows with its line, reason and raw text, and the good lines keep
// their true line numbers (a blank line does not shift them).
func TestBadLinesAreRejectedWithLineAndRaw(t *testing.T) {
	good := jsonl(row("g1", "2026-09-01T10:00:00Z", 10))
	g1 := strings.TrimSpace(good)
	lines := []string{
		g1,             // 1 loaded
		g1[:len(g1)/2], // 2 truncated copy
		`{"request_id":"x3","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":"abc"}`, // 3 wrong type
		`{"request_id":"x4","ts":"2026-09-01T10:00:00Z","model":"m","prompt_tokens":5}`,                     // 4 no tenant
		`{"request_id":"x5","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":11.5}`,  // 5 fraction
		``,      // 6 blank: not a row
		`[1,2]`, // 7 not an object
		`{"request_id":"x8","ts":"yesterday","tenant_id":"t","model":"m","prompt_tokens":5}`,               // 8 bad time
		`{"request_id":"x9","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":-5}`,   // 9 negative
		`{"request_id":{"a":1},"ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`, // 10 object id
		"\xff\xfe not utf8", // 11
		`{"request_id":"g12","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,               // 12 loaded
		`{"request_id":"x13","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":true}`, // 13 bool status
	}
	wantRejected := map[int64]string{
		2: "not JSON", 3: "prompt_tokens: not an integer", 4: "tenant_id: missing", 5: "prompt_tokens: not an integer",
		7: "not a JSON object", 8: "ts: not a timestamp", 9: "prompt_tokens: negative", 10: "request_id: not a string",
		11: "not valid UTF-8", 13: "status: not an integer",
	}
	for _, comp := range []string{"", ".gz", ".zst"} {
		t.Run("bad"+comp, func(t *testing.T) {
			db := openCase(t)
			path := writeFile(t, filepath.Join(t.TempDir(), "bad.jsonl"+comp), strings.Join(lines, "\n")+"\n")
			res := run(t, db, []string{path}, Options{})
			if res.Read != 12 || res.Loaded != 2 || res.Rejected != 10 || res.Duplicates != 0 {
				t.Errorf("read %d loaded %d rejected %d dup %d, want 12 2 10 0", res.Read, res.Loaded, res.Rejected, res.Duplicates)
			}
			rows, err := db.Query(`SELECT line, reason, raw FROM rejected_rows ORDER BY line`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			got := map[int64]string{}
			for rows.Next() {
				var line int64
				var reason, raw string
				rows.Scan(&line, &reason, &raw)
				got[line] = reason
				if want := strings.ToValidUTF8(lines[line-1], "\uFFFD"); raw != want {
					t.Errorf("line %d raw %q, want %q", line, raw, want)
				}
			}
			for line, want := range wantRejected {
				if !strings.HasPrefix(got[line], want) {
					t.Errorf("line %d reason %q, want prefix %q", line, got[line], want)
				}
			}
			if n := count(t, db, `SELECT count(*) FROM requests WHERE (request_id = 'g1' AND line = 1) OR (request_id = 'g12' AND line = 12)`); n != 2 {
				t.Errorf("good rows not at their lines 1 and 12")
			}
		})
	}
}

// TestDuplicatesAndConflicts: at-least-once shipping across rotated parts,
// with another time offset, loads each row once; two rows with one
// request_id and other values are both kept and listed as a conflict.
func TestDuplicatesAndConflicts(t *testing.T) {
	dir := t.TempDir()
	a := row("r1", "2026-09-01T10:00:00Z", 100)
	aOffset := row("r1", "2026-09-01T12:00:00+02:00", 100) // same instant
	b := row("r2", "2026-09-01T10:00:01Z", 200)
	bConflict := row("r2", "2026-09-01T10:00:01Z", 201) // same id, other value
	c := row("r3", "2026-09-01T10:00:02Z", 300)
	p1 := writeFile(t, filepath.Join(dir, "req.jsonl.gz"), jsonl(a, b, a)) // a twice in the part
	p2 := writeFile(t, filepath.Join(dir, "req.1.jsonl.gz"), jsonl(aOffset, bConflict, c, c))
	db := openCase(t)
	res := run(t, db, []string{p1, p2}, Options{})
	f1, f2 := res.Files[0], res.Files[1]
	if f1.Read != 3 || f1.Loaded != 2 || f1.Duplicates != 1 {
		t.Errorf("part 1: %+v", f1)
	}
	if f2.Read != 4 || f2.Loaded != 2 || f2.Duplicates != 2 || f2.Conflicts != 1 {
		t.Errorf("part 2: %+v", f2)
	}
	if res.Conflicts != 1 {
		t.Errorf("conflicts %d, want 1", res.Conflicts)
	}
	rows, err := db.Query(queries.Get("ingest_conflicts"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, path, tenant, ts, model string
		var rowID, line, prompt int64
		rows.Scan(&id, &rowID, &path, &line, &tenant, &ts, &model, &prompt)
		got = append(got, fmt.Sprintf("%s %s:%d %d", id, filepath.Base(path), line, prompt))
	}
	want := []string{"r2 req.jsonl.gz:2 200", "r2 req.1.jsonl.gz:2 201"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("conflicts %v, want %v", got, want)
	}
	// A small file against a bigger case (the per-file search): one
	// duplicate, one conflict.
	p3 := writeFile(t, filepath.Join(dir, "req.2.jsonl.zst"), jsonl(c, row("r3", "2026-09-01T10:00:02Z", 301)))
	res = run(t, db, []string{p3}, Options{})
	if f := res.Files[0]; f.Read != 2 || f.Loaded != 1 || f.Duplicates != 1 || f.Conflicts != 1 {
		t.Errorf("part 3: %+v", f)
	}
	if n := count(t, db, `SELECT count(*) FROM requests`); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
}

// TestHashCollisionLosesNothing: a row whose 64-bit hash equals a row
// already in the case, with the same request_id but another value, is
// loaded (and is a conflict): equality is checked on the values.
func TestHashCollisionLosesNothing(t *testing.T) {
	db := openCase(t)
	p := writeFile(t, filepath.Join(t.TempDir(), "x.jsonl"), jsonl(row("c1", "2026-09-01T10:00:00Z", 5)))
	// Forge a row in the case: same request_id, other prompt_tokens, and
	// the hash the file's row will get.
	if _, err := db.Exec(`INSERT INTO requests SELECT 1, 'c1', TIMESTAMPTZ '2026-09-01 10:00:00Z', NULL, 't-c1', 'glm-5.3', 999, 7, 200, 'p1', 'd1', NULL, NULL,
	    hash('c1', TIMESTAMPTZ '2026-09-01 10:00:00Z', NULL::TIMESTAMPTZ, 't-c1', 'glm-5.3', 5::BIGINT, 7::BIGINT, 200::INTEGER, 'p1', 'd1', NULL::VARCHAR, NULL::VARCHAR), 0, 1`); err != nil {
		t.Fatal(err)
	}
	res := run(t, db, []string{p}, Options{})
	if res.Loaded != 1 || res.Duplicates != 0 || res.Conflicts != 1 {
		t.Errorf("loaded %d duplicates %d conflicts %d, want 1 0 1", res.Loaded, res.Duplicates, res.Conflicts)
	}
	if n := count(t, db, `SELECT count(DISTINCT row_hash) FROM requests`); n != 1 {
		t.Errorf("the forged row does not share the hash (%d hashes): the test proves nothing", n)
	}
	// The same line again in another file is a true duplicate.
	q := writeFile(t, filepath.Join(t.TempDir(), "y.jsonl"), jsonl(row("c1", "2026-09-01T12:00:00+02:00", 5))+"\n")
	if res := run(t, db, []string{q}, Options{}); res.Duplicates != 1 || res.Loaded != 0 {
		t.Errorf("true duplicate: %+v", res)
	}
}

// TestAlreadyLoadedAndNameReused: the same bytes again add nothing; the same
// name with other bytes loads and is flagged.
func TestAlreadyLoadedAndNameReused(t *testing.T) {
	dir := t.TempDir()
	db := openCase(t)
	p := writeFile(t, filepath.Join(dir, "a", "req.jsonl"), jsonl(row("n1", "2026-09-01T10:00:00Z", 5)))
	run(t, db, []string{p}, Options{})
	before := canonicalDump(t, db)
	res := run(t, db, []string{p, filepath.Join(dir, "a")}, Options{}) // twice on the command line, too
	if len(res.Files) != 1 || !res.Files[0].AlreadyLoaded || res.Read != 0 {
		t.Errorf("second load: %+v", res)
	}
	if canonicalDump(t, db) != before || count(t, db, `SELECT count(*) FROM ingest_files`) != 1 {
		t.Error("loading the same file again changed the case")
	}
	q := writeFile(t, filepath.Join(dir, "b", "req.jsonl"), jsonl(row("n1", "2026-09-01T10:00:00Z", 5), row("n2", "2026-09-01T10:00:00Z", 6)))
	res = run(t, db, []string{q}, Options{})
	if !res.Files[0].NameReused || res.Loaded != 1 || res.Duplicates != 1 {
		t.Errorf("same name, other content: %+v", res.Files[0])
	}
	if n := count(t, db, `SELECT count(*) FROM ingest_files WHERE name_reused`); n != 1 {
		t.Errorf("name_reused rows %d, want 1", n)
	}
}

// TestEmptyFilesAreRecorded: a quiet rotated part is recorded with zero rows.
func TestEmptyFilesAreRecorded(t *testing.T) {
	dir := t.TempDir()
	db := openCase(t)
	paths := []string{
		writeFile(t, filepath.Join(dir, "empty.jsonl"), ""),
		writeFile(t, filepath.Join(dir, "empty.jsonl.gz"), ""),
		writeFile(t, filepath.Join(dir, "blank.jsonl.zst"), "\n\n"),
	}
	res := run(t, db, paths, Options{})
	if res.Read != 0 || len(res.Files) != 3 {
		t.Errorf("%+v", res)
	}
	if n := count(t, db, `SELECT count(*) FROM ingest_files WHERE format = 'empty' AND rows_read = 0`); n != 3 {
		t.Errorf("%d empty files recorded, want 3", n)
	}
}

// TestNotALogStopsAndChangesNothing: a file that is not a log stops the run
// with an input error naming it, before any file is loaded.
func TestNotALogStopsAndChangesNothing(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "good.jsonl"), jsonl(row("ok", "2026-09-01T10:00:00Z", 5)))
	bin := filepath.Join(dir, "core.bin")
	os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2, 3, 0xff, 0xfe}, 0o644)
	engine := writeFile(t, filepath.Join(dir, "decode-1.jsonl"), `{"timestamp":"2026-09-02T08:14:03.512Z","event":"request.received","rid":"9f","obj":{"rid":"9f"}}
{"timestamp":"2026-09-02T08:14:09.880Z","event":"request.finished","rid":"9f","out":{"meta_info":{"prompt_tokens":4,"completion_tokens":3}}}
`)
	goodEngine := writeFile(t, filepath.Join(dir, "glm-d0_0.log"), `{"timestamp":"2026-09-02T08:14:03.512Z","event":"request.received","rid":"9e","obj":{"rid":"9e","user":"acct_1"}}
`)
	goodEngineNamed := writeFile(t, filepath.Join(dir, "glm-d1_0.log"), `{"timestamp":"2026-09-02T08:14:03.512Z","event":"request.received","rid":"9e","obj":{"rid":"9e"}}
`)
	tests := []struct {
		name  string
		path  string
		opts  Options
		wants []string
	}{
		{"binary", bin, Options{}, []string{"core.bin", "binary"}},
		{"binary gz", writeFile(t, filepath.Join(dir, "x.gz"), "\x00\x01\x02garbage\x00"), Options{}, []string{"x.gz", "binary"}},
		{"csv without columns", writeFile(t, filepath.Join(dir, "users.csv"), "name,email\nann,a@x\n"), Options{}, []string{"users.csv", `no column "request_id"`, "tenant_id"}},
		{"engine without host in its name", engine, Options{Preset: "engine", Role: "decode", Model: "glm-5.3"}, []string{"decode-1.jsonl", "every record lacks instance", "{host}_{rank}.log"}},
		{"engine without model", goodEngineNamed, Options{Preset: "sglang", Role: "decode"}, []string{"glm-d1_0.log", "every record lacks model", "--model"}},
		{"sglang text log", writeFile(t, filepath.Join(dir, "glm-d1_0.txt"), "[2026-09-02 08:06:44 TP0] Input length (812004 tokens) exceeds the maximum allowed length (681279 tokens).\n"), Options{Preset: "sglang", Role: "decode", Model: "m"}, []string{"glm-d1_0.txt", "SGLang text log", "[time TPn] message", "leakmap preflight"}},
		{"json array", writeFile(t, filepath.Join(dir, "arr.json"), `[{"a":1}]`), Options{}, []string{"arr.json", "JSON array"}},
		{"other json", writeFile(t, filepath.Join(dir, "other.jsonl"), `{"foo":1}`+"\n"), Options{}, []string{"other.jsonl", `no field "request_id"`}},
		{"missing file", filepath.Join(dir, "nope.jsonl"), Options{}, []string{"nope.jsonl"}},
		{"no glob match", filepath.Join(dir, "*.nothing"), Options{}, []string{"no file matches"}},
		{"parquet as csv", writeParquet(t, good, filepath.Join(dir, "p.parquet")), Options{Format: "csv"}, []string{"p.parquet", "Parquet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openCase(t)
			first := good // a good file before the bad one: not loaded either
			switch {
			case tt.opts.Preset == "sglang" && tt.opts.Model == "":
				first = tt.path // no file loads without a model
			case tt.opts.Preset == "engine" || tt.opts.Preset == "sglang":
				first = goodEngine
			case tt.opts.Format == "csv":
				first = writeFile(t, filepath.Join(t.TempDir(), "ok.csv"), csvSample)
			}
			_, err := Run(context.Background(), db, nil, []string{first, tt.path}, tt.opts)
			if !errors.Is(err, errs.ErrInput) {
				t.Fatalf("err %v, want an input error", err)
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
			if n := count(t, db, `SELECT (SELECT count(*) FROM ingest_files) + (SELECT count(*) FROM requests) + (SELECT count(*) FROM rejected_rows) + (SELECT count(*) FROM source_records)`); n != 0 {
				t.Errorf("the case changed: %d rows", n)
			}
		})
	}
	// Bad options are usage errors.
	for _, o := range []Options{{Preset: "nginx"}, {Format: "xml"}, {Preset: "engine", MappingFile: "m.yaml"}, {MappingFile: filepath.Join(dir, "none.yaml")}} {
		if _, err := Run(context.Background(), openCase(t), nil, []string{good}, o); !errors.Is(err, errs.ErrUsage) {
			t.Errorf("%+v: err %v, want a usage error", o, err)
		}
	}
}

// TestMappingFile: a user's CSV with its own names, a local time format and
// a constant model.
func TestMappingFile(t *testing.T) {
	dir := t.TempDir()
	mapping := writeFile(t, filepath.Join(dir, "map.yaml"), `
fields:
  request_id: req
  ts: when
  tenant_id: customer
  prompt_tokens: in_tok
  completion_tokens: out_tok
  decode_instance: node
constants:
  model: glm-5.3
time_format: "%d/%m/%Y %H:%M:%S"
time_zone: Europe/Paris
duration_field: secs
duration_unit: s
`)
	p := writeFile(t, filepath.Join(dir, "export.csv"), "req,when,customer,in_tok,out_tok,node,secs\nq1,02/09/2026 10:14:03,acme,5000,12,dec-2,1.5\nq2,not a date,acme,1,1,dec-2,1\n")
	db := openCase(t)
	res := run(t, db, []string{p}, Options{MappingFile: mapping})
	if res.Loaded != 1 || res.Rejected != 1 {
		t.Errorf("loaded %d rejected %d", res.Loaded, res.Rejected)
	}
	want := "q1|2026-09-02T08:14:03Z|2026-09-02T08:14:04.500000Z|acme|glm-5.3|5000|12|-|-|dec-2|-|-\n"
	if got := canonicalDump(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if n := count(t, db, `SELECT count(*) FROM rejected_rows WHERE line = 3 AND reason LIKE 'ts: not a timestamp in the format%' AND raw = 'q2,not a date,acme,1,1,dec-2,1'`); n != 1 {
		t.Error("the bad CSV row is not kept with its line, reason and raw text")
	}
	if res.Files[0].Preset != "mapping:map.yaml" {
		t.Errorf("preset %q", res.Files[0].Preset)
	}
	bad := writeFile(t, filepath.Join(dir, "bad.yaml"), "fields:\n  tenant: customer\n")
	if _, err := Run(context.Background(), db, nil, []string{p}, Options{MappingFile: bad}); !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("bad mapping: %v", err)
	}
}

// TestCSVBadRows: malformed CSV records are rejected with their line and raw text.
func TestCSVBadRows(t *testing.T) {
	content := "request_id,ts,tenant_id,model,prompt_tokens\n" +
		"c1,2026-09-01T10:00:00Z,t1,m,5\n" +
		"c2,2026-09-01T10:00:00Z,t1\n" + // too few fields
		"c3,2026-09-01T10:00:00Z,t\"1,m,5\n" + // bare quote
		"\n" +
		"\"c4\",\"2026-09-01T10:00:00Z\",\"multi\nline\",m,5\n" +
		"c5,2026-09-01T10:00:00Z,t1,m,x\n"
	db := openCase(t)
	p := writeFile(t, filepath.Join(t.TempDir(), "x.csv"), content)
	res := run(t, db, []string{p}, Options{})
	if res.Read != 5 || res.Loaded != 2 || res.Rejected != 3 {
		t.Errorf("read %d loaded %d rejected %d, want 5 2 3", res.Read, res.Loaded, res.Rejected)
	}
	if n := count(t, db, `SELECT count(*) FROM requests WHERE (request_id = 'c1' AND line = 2) OR (request_id = 'c4' AND line = 6 AND tenant_id = E'multi\nline')`); n != 2 {
		t.Errorf("CSV rows not at their lines:\n%s", canonicalDump(t, db))
	}
	if n := count(t, db, `SELECT count(*) FROM rejected_rows WHERE line IN (3, 4, 8)`); n != 3 {
		t.Errorf("rejected lines wrong")
	}
}

// TestFastPathKeepsLineNumbers: a clean file large enough for DuckDB to
// parse in parallel still gets every row's true line, and takes the fast path.
func TestFastPathKeepsLineNumbers(t *testing.T) {
	var b strings.Builder
	const n = 60000
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"request_id":"L%d","ts":"2026-09-01T10:00:00Z","tenant_id":"t%d","model":"m","prompt_tokens":%d,"prompt_text":"%s"}`+"\n",
			i, i%7, i, strings.Repeat("x", i%300))
	}
	for _, name := range []string{"big.jsonl", "big.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), name), b.String())
			db := openCase(t)
			res, logs := runLogged(t, db, []string{p}, Options{})
			if res.Loaded != n {
				t.Fatalf("loaded %d", res.Loaded)
			}
			if strings.Contains(logs, "line by line") {
				t.Errorf("a clean file left the fast path:\n%s", logs)
			}
			if bad := count(t, db, `SELECT count(*) FROM requests WHERE request_id <> 'L' || line OR row_id <> (file_id << 32) + line`); bad != 0 {
				t.Errorf("%d rows with a wrong line", bad)
			}
		})
	}
	// A crash between the fast path's two transactions (rows committed,
	// not yet numbered or recorded): opening the case again drops the rows,
	// and a rerun loads the file whole.
	path := filepath.Join(t.TempDir(), "case.duckdb")
	db, err := casedb.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	q := writeFile(t, filepath.Join(t.TempDir(), "crash.jsonl"), b.String())
	crash := errors.New("crash")
	testHookAfterRows = func(string) error { return crash }
	defer func() { testHookAfterRows = nil }()
	if _, err := Run(context.Background(), db, nil, []string{q}, Options{}); !errors.Is(err, crash) {
		t.Fatalf("err %v, want the crash", err)
	}
	if got := count(t, db, `SELECT count(*) FROM requests`); got != n {
		t.Fatalf("%d rows committed before the crash, want %d (else the hook tests nothing)", got, n)
	}
	if got := count(t, db, `SELECT count(*) FROM ingest_pending`); got != 1 {
		t.Fatalf("%d files marked as loading at the crash, want 1", got)
	}
	db.Close()
	testHookAfterRows = nil
	db, err = casedb.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := count(t, db, `SELECT count(*) FROM requests`); got != 0 {
		t.Errorf("after reopening: %d rows of an unrecorded load, want 0", got)
	}
	res := run(t, db, []string{q}, Options{})
	if res.Loaded != n || res.Duplicates != 0 || count(t, db, `SELECT count(*) FROM requests`) != n {
		t.Fatalf("rerun: %+v", res)
	}
	if bad := count(t, db, `SELECT count(*) FROM requests WHERE request_id <> 'L' || line OR row_id <> (file_id << 32) + line`); bad != 0 {
		t.Errorf("after the crash and rerun: %d rows with a wrong line", bad)
	}
}

// TestCancelLeavesConsistentCaseAndRerunFinishes: Ctrl-C in the middle of a
// load rolls the file back; a rerun loads what is missing and nothing twice.
func TestCancelLeavesConsistentCaseAndRerunFinishes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for f := 0; f < 3; f++ {
		var rows []rec
		for i := 0; i < 3000; i++ {
			rows = append(rows, row(fmt.Sprintf("f%d-%d", f, i), "2026-09-01T10:00:00Z", i))
		}
		body := jsonl(rows...)
		if f == 1 {
			body += "{truncated\n" // the checked path
		}
		paths = append(paths, writeFile(t, filepath.Join(dir, fmt.Sprintf("part-%d.jsonl.gz", f)), body))
	}
	for cancelAt := 1; cancelAt <= 3; cancelAt++ {
		t.Run(fmt.Sprint(cancelAt), func(t *testing.T) {
			db := openCase(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			testHookBeforeCommit = func(string) {
				if n++; n == cancelAt {
					cancel()
				}
			}
			defer func() { testHookBeforeCommit = nil }()
			res, err := Run(ctx, db, nil, paths, Options{})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			if len(res.Files) != cancelAt-1 {
				t.Errorf("%d files committed, want %d", len(res.Files), cancelAt-1)
			}
			if got := count(t, db, `SELECT count(*) FROM ingest_files`); got != int64(cancelAt-1) {
				t.Errorf("%d files in the ledger after the interrupt, want %d", got, cancelAt-1)
			}
			checkReconciled(t, db, &Result{})
			if got := count(t, db, `SELECT count(*) FROM ingest_pending`); got != 0 {
				t.Errorf("%d files still marked as loading after the interrupt", got)
			}
			testHookBeforeCommit = nil
			res = run(t, db, paths, Options{})
			if got := count(t, db, `SELECT count(*) FROM requests`); got != 9000 {
				t.Errorf("after rerun: %d requests, want 9000 (%+v)", got, res)
			}
			if got := count(t, db, `SELECT count(*) FROM rejected_rows`); got != 1 {
				t.Errorf("after rerun: %d rejected rows, want 1", got)
			}
			if res.Duplicates != 0 || len(res.Files) != 3 {
				t.Errorf("rerun: %+v", res)
			}
		})
	}
}

// TestSimulatorNoise: rotated parts as the simulator writes them (duplicates
// across parts, a truncated extra copy of a line, rows without a decode
// instance, mixed offsets) load every distinct row once.
func TestSimulatorNoise(t *testing.T) {
	dir := t.TempDir()
	var all []rec
	zones := []string{"Z", "+02:00", "-05:00"}
	for i := 0; i < 300; i++ {
		ts := time.Date(2026, 9, 1, 10, 0, i, 0, time.UTC)
		z := zones[i%3]
		loc := map[string]*time.Location{"Z": time.UTC, "+02:00": time.FixedZone("", 7200), "-05:00": time.FixedZone("", -18000)}[z]
		r := row(fmt.Sprintf("s%03d", i), ts.In(loc).Format(time.RFC3339), 1000+i)
		if i%10 == 0 {
			delete(r, "decode_instance")
		}
		all = append(all, r)
	}
	shift := func(r rec) rec { // the same row written with another offset
		c := rec{}
		for k, v := range r {
			c[k] = v
		}
		ts, _ := time.Parse(time.RFC3339, r["ts"].(string))
		c["ts"] = ts.In(time.FixedZone("", 3600*9)).Format(time.RFC3339Nano)
		return c
	}
	part0 := jsonl(all[:120]...)
	part1 := jsonl(append([]rec{all[119], shift(all[118])}, all[120:220]...)...) // overlap with part 0
	trunc := strings.SplitAfter(jsonl(all[230]), ",")[0]                         // a damaged copy
	part2 := jsonl(all[220:300]...) + trunc + "\n" + jsonl(all[250])
	paths := []string{
		writeFile(t, filepath.Join(dir, "requests.jsonl.gz"), part0),
		writeFile(t, filepath.Join(dir, "requests.1.jsonl.gz"), part1),
		writeFile(t, filepath.Join(dir, "requests.2.jsonl.gz"), part2),
		writeFile(t, filepath.Join(dir, "requests.3.jsonl.gz"), ""),
	}
	db := openCase(t)
	res := run(t, db, []string{filepath.Join(dir, "requests*.jsonl.gz")}, Options{})
	if res.Loaded != 300 || res.Duplicates != 3 || res.Rejected != 1 || len(res.Files) != 4 {
		t.Errorf("loaded %d duplicates %d rejected %d files %d, want 300 3 1 4", res.Loaded, res.Duplicates, res.Rejected, len(res.Files))
	}
	if n := count(t, db, `SELECT count(DISTINCT request_id) FROM requests`); n != 300 {
		t.Errorf("%d distinct requests", n)
	}
	if n := count(t, db, `SELECT count(*) FROM requests WHERE decode_instance IS NULL`); n != 30 {
		t.Errorf("%d rows without decode instance, want 30", n)
	}
	_ = paths
}

func TestParseTimestamps(t *testing.T) {
	m, _ := presetMapping("canonical")
	tests := []struct {
		in   any
		want string
	}{
		{"2026-09-02T08:14:03Z", "2026-09-02T08:14:03Z"},
		{"2026-09-02T10:14:03.512+02:00", "2026-09-02T08:14:03.512Z"},
		{"2026-09-02T08:14:03.123456789Z", "2026-09-02T08:14:03.123456Z"},
		{"2026-09-02 08:14:03+00", "2026-09-02T08:14:03Z"},
		{"2026-09-02 08:14:03", "2026-09-02T08:14:03Z"},
		{"2026-09-02T03:14:03-0500", "2026-09-02T08:14:03Z"},
		{json.Number("1788336843"), "2026-09-02T08:14:03Z"},
		{json.Number("1788336843.512"), "2026-09-02T08:14:03.512Z"},
		{json.Number("1788336843512"), "2026-09-02T08:14:03.512Z"},
		{"1788336843512", "2026-09-02T08:14:03.512Z"},
		{" 1788336843 ", "2026-09-02T08:14:03Z"},
		{int64(1788336843), "2026-09-02T08:14:03Z"},
		{float64(1788336843.5), "2026-09-02T08:14:03.5Z"},
		{json.Number("1.788336843e9"), "2026-09-02T08:14:03Z"},
		{"2026-09-02", "2026-09-02T00:00:00Z"},
		{"0x10", "error"},
		{"Inf", "error"},
		{"yesterday", "error"},
		{"", "error"},
		{json.Number("-5"), "error"},
		{json.Number("1e30"), "error"},
		{true, "error"},
	}
	for _, tt := range tests {
		got := "error"
		if ts, err := toTime(tt.in, m); err == nil {
			got = ts.Format(time.RFC3339Nano)
		}
		if got != tt.want {
			t.Errorf("toTime(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestFastAndCheckedPathsAgree: the same valid lines, loaded by DuckDB's
// reader (a clean file) and line by line in Go (the same file with one bad
// line), give the same rows; an odd but valid value must not make the two
// disagree, or duplicates across files would be missed.
func TestFastAndCheckedPathsAgree(t *testing.T) {
	lines := []string{
		`{"request_id":"v1","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
		`{"request_id":"v2","ts":"2026-09-01 10:00:00","tenant_id":"t","model":"m","prompt_tokens":"12","completion_tokens":"0","status":"200"}`,
		`{"request_id":"v3","ts":"2026-09-01T12:00:00.123456789+02:00","end_ts":"2026-09-01T10:00:01Z","tenant_id":"t","model":"m","prompt_tokens":5,"decode_instance":""}`,
		`{"request_id":"v4","ts":"2026-09-01","tenant_id":"t\u00e9 \"q\" \\ \n","model":"m","prompt_tokens":5,"prompt_text":"日本語 ✓","response_text":"","extra":{"x":[1,2]}}`,
		`{"request_id":"v5","ts":"2026-09-01T10:00:00-00:30","tenant_id":"t","model":"m","prompt_tokens":0,"status":null,"end_ts":null}`,
		`{"ts":"2026-09-01T10:00:00Z","request_id":"v6","model":"m","tenant_id":"t","prompt_tokens":9007199254740993}`,
		`{"request_id":"v7","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"prompt_text":"[INST] hi [/INST]","decode_instance":"[d1]"}`,
		`{"request_id":"v8","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"prompt_text":["a","b"],"response_text":true}`,
		`{"request_id":"v9","ts":"2026-09-01T10:00:00Z","tenant_id":"first","model":"m","prompt_tokens":5,"tenant_id":"second","request_id":"v9b","prompt_text":"tenant_id"}`,
		`{"request_id":"v10","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"model","prompt_tokens":5,"status":null,"status":200}`,
	}
	clean := strings.Join(lines, "\n") + "\n"
	dir := t.TempDir()
	fastDB := openCase(t)
	res, logs := runLogged(t, fastDB, []string{writeFile(t, filepath.Join(dir, "a", "x.jsonl"), clean)}, Options{})
	if strings.Contains(logs, "line by line") || res.Loaded != int64(len(lines)) {
		t.Fatalf("the clean file did not load on the fast path (loaded %d):\n%s", res.Loaded, logs)
	}
	// The same lines plus a bad one: DuckDB's reader still loads the valid
	// lines (the bad one is read again in Go); and all of it forced through
	// the checked path. All three agree.
	for _, force := range []bool{false, true} {
		testForceChecked = force
		otherDB := openCase(t)
		res = run(t, otherDB, []string{writeFile(t, filepath.Join(dir, fmt.Sprint("b", force), "x.jsonl"), clean+"{bad\n")}, Options{})
		testForceChecked = false
		if res.Loaded != int64(len(lines)) || res.Rejected != 1 {
			t.Fatalf("forced checked %v: %+v", force, res)
		}
		if got, want := canonicalDump(t, otherDB), canonicalDump(t, fastDB); got != want {
			t.Errorf("forced checked %v\n%sfast path\n%s", force, got, want)
		}
	}
	// And in one case, each file is all duplicates of the other.
	res = run(t, fastDB, []string{writeFile(t, filepath.Join(dir, "c", "y.jsonl"), clean+"{bad\n")}, Options{})
	if res.Duplicates != int64(len(lines)) || res.Loaded != 0 {
		t.Errorf("fast then checked: %+v", res)
	}
}

// TestProgressBar: with a writer, a bar is drawn and ends at 100% even when
// a file's fast attempt gives way to the checked path.
func TestProgressBar(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "a.jsonl.gz"), jsonl(sampleRows...))
	bad := writeFile(t, filepath.Join(dir, "b.jsonl.gz"), jsonl(row("p1", "2026-09-01T10:00:00Z", 1))+"{bad\n")
	var bar bytes.Buffer
	res, err := Run(context.Background(), openCase(t), nil, []string{good, bad}, Options{Progress: &bar})
	if err != nil || res.Loaded != 4 {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.Contains(bar.String(), "ingest") || !strings.Contains(bar.String(), "%") {
		t.Errorf("no bar drawn: %q", bar.String())
	}
	// The count never passes the total, and a rewind takes it back.
	p := newProgress(io.Discard, 100)
	p.add(60)
	m := p.mark()
	p.add(70)
	if p.done != 130 || p.bar.State().CurrentNum != 100 {
		t.Errorf("done %d shown %d", p.done, p.bar.State().CurrentNum)
	}
	p.rewind(m)
	p.add(40)
	if p.bar.State().CurrentNum != 100 || p.done != 100 {
		t.Errorf("after rewind: done %d shown %d", p.done, p.bar.State().CurrentNum)
	}
	// Without a writer nothing is drawn anywhere: a bar library falls back
	// to the process's stdout or stderr, so catch both while a quiet run works.
	db := openCase(t)
	var quietErr error
	if got := captureStdio(t, func() {
		_, quietErr = Run(context.Background(), db, nil, []string{good}, Options{})
	}); quietErr != nil || got != "" {
		t.Errorf("quiet run wrote %q (%v)", got, quietErr)
	}
}

// TestParquetChecked: a Parquet file with a bad row, bigger than the
// appender's chunks, through the checked path on a pool of one connection.
func TestParquetChecked(t *testing.T) {
	dir := t.TempDir()
	var rows []rec
	for i := 1; i <= 20000; i++ {
		r := row(fmt.Sprintf("q%d", i), "2026-09-01T10:00:00Z", i)
		if i == 12345 {
			r["tenant_id"] = ""
		}
		rows = append(rows, r)
	}
	src := writeFile(t, filepath.Join(dir, "rows.jsonl"), jsonl(rows...))
	p := writeParquet(t, src, filepath.Join(dir, "rows.parquet"))
	db := openCase(t)
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, db, nil, []string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkReconciled(t, db, res)
	if res.Loaded != 19999 || res.Rejected != 1 {
		t.Errorf("loaded %d rejected %d", res.Loaded, res.Rejected)
	}
	if n := count(t, db, `SELECT count(*) FROM rejected_rows WHERE line = 12345 AND reason = 'tenant_id: missing' AND raw LIKE '%"request_id":"q12345"%'`); n != 1 {
		t.Error("the bad Parquet row is not kept with its row number and content")
	}
	if n := count(t, db, `SELECT count(*) FROM requests WHERE request_id <> 'q' || line`); n != 0 {
		t.Errorf("%d rows with a wrong row number", n)
	}
}

// TestFastPathWithBadLines: a large file with every kind of line the fast
// reader cannot judge, blank lines and a duplicate stays on the fast path
// and gives exactly what the checked path gives on the same bytes: the
// same rows at the same lines, the same rejected lines with the same
// reasons and raw text, the same counts.
func TestFastPathWithBadLines(t *testing.T) {
	const n = 30000
	var lines []string
	for i := 1; i <= n; i++ {
		j, _ := json.Marshal(row(fmt.Sprintf("B%d", i), "2026-09-01T10:00:00Z", i))
		lines = append(lines, string(j))
	}
	lines[0] = "\xef\xbb\xbf" + lines[0]                                                               // a byte order mark
	lines[99] = lines[99][:len(lines[99])/2]                                                           // truncated
	lines[199] = ""                                                                                    // blank
	lines[200] = "  \t"                                                                                // blank, spaces
	lines[201] = ""                                                                                    // blank again
	lines[299] = `{"request_id":"B300","ts":1788256800,"tenant_id":"t","model":"m","prompt_tokens":5}` // epoch: Go takes it
	lines[399] = `{"request_id":"B400","ts":{"x":1},"tenant_id":"t","model":"m","prompt_tokens":5}`
	lines[499] = `{}`
	lines[599] = "garbage"
	lines[699] = "{\"request_id\":\"B700\xff\"}"
	lines[799] = `{"request_id":"B800","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":"11.5"}`
	lines[899] = `{"request_id":"B900","ts":"2026-09-01T10:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":1e2}`
	lines[999] = lines[10] // an exact duplicate, later in the file
	lines[1099] = `{"request_id":"B1100","ts":1788256800123,"end_ts":"1788256801","tenant_id":"t","model":"m","prompt_tokens":5}`
	lines[1199] = `{"request_id":"B1200","ts":"99999999999","end_ts":100000000000,"tenant_id":"t","model":"m","prompt_tokens":5}`
	lines[1299] = `{"request_id":"B1300","ts":253402300799999,"end_ts":253402300800000,"tenant_id":"t","model":"m","prompt_tokens":5}`
	lines[1399] = `{"request_id":"B1400","ts":1788256800.25,"tenant_id":"t","model":"m","prompt_tokens":5}`
	lines[1499] = `{"request_id":"B1500","ts":0,"tenant_id":"t","model":"m","prompt_tokens":5}`
	lines[12345] = "   " + lines[12345]                                                             // leading spaces: a row
	body := strings.Join(lines, "\n") + "\n\n" + `{"request_id":"last","ts":"2026-09-01T10:00:00Z"` // trailing blank, truncated end
	crlf := strings.ReplaceAll(body, "\n", "\r\n")
	for _, tt := range []struct{ name, body string }{
		{"bad.jsonl", body}, {"bad.jsonl.gz", body}, {"bad.jsonl.zst", body}, {"bad-crlf.jsonl.gz", crlf},
	} {
		name := tt.name
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), name), tt.body)
			// Three readers: the Go reader, DuckDB's (the Go reader
			// skipped), the checked path.
			dump := func(mode string) (string, *Result) {
				force := mode == "checked"
				testForceChecked, testSkipGoReader = force, mode == "duckdb"
				defer func() { testForceChecked, testSkipGoReader = false, false }()
				db := openCase(t)
				// The file ends inside its last line: both paths reject it
				// as torn, and the file is damaged (torn.go).
				var logBuf bytes.Buffer
				res, err := Run(context.Background(), db, slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})), []string{p}, Options{})
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), p+" (torn last line)") || res.Files[0].Damage != "torn last line" {
					t.Fatalf("Run: %v, want the file damaged by its torn last line", err)
				}
				checkReconciled(t, db, res)
				logs := logBuf.String()
				if mode == "go" && (strings.Contains(logs, "line by line") || strings.Contains(logs, "cannot take") || !strings.Contains(logs, "step=ingest_arrow_0_insert")) {
					t.Errorf("the file left the Go reader:\n%s", logs)
				}
				if mode == "go" {
					force = true // the DuckDB reader's own checks below do not apply
				}
				if !force && (strings.Contains(logs, "line by line") || !strings.Contains(logs, "could not judge")) {
					t.Errorf("the file left the fast path:\n%s", logs)
				}
				// Read again in Go: the byte order mark, the two truncated
				// lines, ts object, {}, garbage, bad UTF-8, 11.5, 1e2, an
				// epoch past 9999, an epoch with a fraction. The other epochs
				// are DuckDB's.
				if !force && !strings.Contains(logs, "could not judge\" file="+p+" lines=11\n") {
					t.Errorf("not the 11 lines expected to be read again:\n%s", logs)
				}
				// Lines 4097, 8193, ... 28673 (not line 1: its byte order mark).
				if !force && !strings.Contains(logs, "msg=\"sampled lines\" file="+p+" checked=7 mismatched=0\n") {
					t.Errorf("not the 7 sampled lines expected:\n%s", logs)
				}
				var b strings.Builder
				for _, q := range []string{
					`SELECT string_agg(concat_ws('|', line, row_id - (file_id << 32), request_id, rfc3339(ts), tenant_id, prompt_tokens, status, row_hash), E'\n' ORDER BY line) FROM requests`,
					`SELECT string_agg(concat_ws('|', line, reason, raw), E'\n' ORDER BY line) FROM rejected_rows`,
				} {
					var s sql.NullString
					if err := db.QueryRow(q).Scan(&s); err != nil {
						t.Fatal(err)
					}
					b.WriteString(s.String + "\n--\n")
				}
				return b.String(), res
			}
			want, wantRes := dump("checked")
			w := wantRes.Files[0]
			for _, mode := range []string{"duckdb", "go"} {
				got, gotRes := dump(mode)
				if got != want {
					t.Errorf("%s reader and checked path differ:\n%s", mode, firstDiff(got, want))
				}
				g := gotRes.Files[0]
				if g.Read != w.Read || g.Loaded != w.Loaded || g.Rejected != w.Rejected || g.Duplicates != w.Duplicates || g.Conflicts != w.Conflicts {
					t.Errorf("counts: %s reader %+v, checked %+v", mode, g, w)
				}
			}
			// The checked path's own verdict, so the comparison cannot pass
			// on two equally wrong loads: 30,000 lines, a trailing blank one
			// and a last one, 4 of them blank; rejected: truncated x2, ts
			// object, {}, garbage, bad UTF-8, 11.5, an end_ts past 9999;
			// B1000 duplicates B11.
			if w.Read != n+2-4 || w.Rejected != 8 || w.Duplicates != 1 || w.Loaded != n+2-4-8-1 {
				t.Errorf("checked path counts %+v", w)
			}
		})
	}
}

// firstDiff shows where two multi-line texts first differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  got  %q\n  want %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(al), len(bl))
}

// TestFastPathSampleMismatch: when a sampled line's row does not carry the
// request_id on that line (rows out of file order), the file goes to the
// checked path, and loads right.
func TestFastPathSampleMismatch(t *testing.T) {
	var rows []rec
	for i := 1; i <= 10000; i++ {
		rows = append(rows, row(fmt.Sprintf("S%d", i), "2026-09-01T10:00:00Z", i))
	}
	p := writeFile(t, filepath.Join(t.TempDir(), "s.jsonl.gz"), jsonl(rows...))
	testHookSamples = func(s map[int64]string) { s[4097] = "S4098" }
	testSkipGoReader = true // the samples are DuckDB's reader's check
	defer func() { testHookSamples, testSkipGoReader = nil, false }()
	db := openCase(t)
	res, logs := runLogged(t, db, []string{p}, Options{})
	if !strings.Contains(logs, "rows out of file order") || !strings.Contains(logs, "line by line") {
		t.Errorf("the mismatch did not send the file to the checked path:\n%s", logs)
	}
	if bad := count(t, db, `SELECT count(*) FROM requests WHERE request_id <> 'S' || line`); bad != 0 || res.Loaded != 10000 {
		t.Errorf("%d rows at a wrong line, %d loaded", bad, res.Loaded)
	}
	if n := count(t, db, `SELECT count(*) FROM ingest_files`); n != 1 {
		t.Errorf("%d files recorded", n)
	}
	if n := count(t, db, `SELECT count(*) FROM ingest_pending`); n != 0 {
		t.Errorf("%d files still marked as loading", n)
	}
}

// captureStdio runs f with the process's stdout and stderr sent to a pipe
// and returns what f wrote to them.
func captureStdio(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	func() {
		defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
		f()
	}()
	w.Close()
	return <-done
}
