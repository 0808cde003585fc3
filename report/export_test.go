package report

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
)

var csvQueries = map[string]string{"tenants": "out_tenants", "exposures": "out_exposures", "affected_requests": "out_affected_requests"}

// TestExports reads the Parquet files back through DuckDB and the Arrow
// files through arrow-go, and compares them, row by row and in order, with
// the CSV outputs' queries.
func TestExports(t *testing.T) {
	db, inc := newCase(t)
	out, _ := writeReport(t, db, inc)
	for _, tb := range evidenceTables() {
		want := dbRows(t, db, query(csvQueries[tb.file]))
		if len(want) == 0 {
			t.Fatalf("%s: no rows in the test case", tb.file)
		}
		t.Run(tb.file+".parquet", func(t *testing.T) {
			p := filepath.Join(out, tb.file+".parquet")
			got := dbRows(t, db, fmt.Sprintf("SELECT * FROM read_parquet('%s')", p))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parquet rows\n got %v\nwant %v", got, want)
			}
			cols := dbRows(t, db, fmt.Sprintf("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('%s'))", p))
			for i, c := range tb.cols {
				if cols[i][0] != c.name {
					t.Errorf("column %d = %s, want %s", i, cols[i][0], c.name)
				}
				if c.kind == kTime && cols[i][1] != "TIMESTAMP WITH TIME ZONE" {
					t.Errorf("column %s is %s, want a timestamp", c.name, cols[i][1])
				}
			}
		})
		t.Run(tb.file+".arrow", func(t *testing.T) {
			got := readArrow(t, filepath.Join(out, tb.file+".arrow"))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("arrow rows\n got %v\nwant %v", got, want)
			}
		})
	}
}

func readArrow(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][]string
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		for row := 0; row < int(rec.NumRows()); row++ {
			vals := make([]string, rec.NumCols())
			for c := range vals {
				vals[c] = arrowString(t, rec.Column(c), row)
			}
			out = append(out, vals)
		}
	}
	return out
}

func arrowString(t *testing.T, col arrow.Array, i int) string {
	if col.IsNull(i) {
		return ""
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Boolean:
		return fmt.Sprint(a.Value(i))
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return formatValue(a.Value(i).ToTime(unit).UTC())
	}
	t.Fatalf("unexpected arrow column type %s", col.DataType())
	return ""
}

// TestNoLoggedText plants marker strings in every column of logged text
// (prompt_text, response_text, rejected raw lines) and looks for them in
// every output byte: the files as written, the workbook's unzipped parts,
// and the Parquet files' decoded values.
func TestNoLoggedText(t *testing.T) {
	db, inc := newCase(t)
	if n := dbCount(t, db, `SELECT count(*) FROM requests WHERE prompt_text LIKE 'MARKER-PROMPT-%' AND response_text LIKE 'MARKER-RESPONSE-%'`); n == 0 {
		t.Fatal("the test case plants no markers")
	}
	if n := dbCount(t, db, `SELECT count(*) FROM rejected_rows WHERE raw LIKE '%MARKER-RAW-%'`); n == 0 {
		t.Fatal("the test case plants no markers in rejected rows")
	}
	// A marker can also hide in a truncated JSON line: only the prefix survives.
	out, res := writeReport(t, db, inc)
	var blobs = map[string][]byte{}
	for _, p := range res.Files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		blobs[filepath.Base(p)] = b
		switch {
		case strings.HasSuffix(p, ".xlsx"):
			z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			for _, zf := range z.File {
				blobs[filepath.Base(p)+"/"+zf.Name] = []byte(readZipPart(t, zf))
			}
		case strings.HasSuffix(p, ".parquet"):
			var all []string
			for _, r := range dbRows(t, db, fmt.Sprintf("SELECT CAST(t AS VARCHAR) FROM read_parquet('%s') t", p)) {
				all = append(all, r...)
			}
			blobs[filepath.Base(p)+" (decoded)"] = []byte(strings.Join(all, "\n"))
		case strings.HasSuffix(p, ".arrow"):
			var all []string
			for _, r := range readArrow(t, p) {
				all = append(all, r...)
			}
			blobs[filepath.Base(p)+" (decoded)"] = []byte(strings.Join(all, "\n"))
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(res.Files) {
		t.Errorf("out has %d files, Result lists %d", len(entries), len(res.Files))
	}
	// The search must be able to see what is there: request ids are in the
	// workbook's shared strings and in every decoded export.
	var sheets []byte
	for name, b := range blobs {
		if strings.HasPrefix(name, "report.xlsx/xl/worksheets/") {
			sheets = append(sheets, b...)
		}
	}
	if !bytes.Contains(sheets, []byte("req-0111")) ||
		!bytes.Contains(blobs["exposures.parquet (decoded)"], []byte("req-0111")) ||
		!bytes.Contains(blobs["exposures.arrow (decoded)"], []byte("req-0111")) {
		t.Fatal("control: a request id is not found where it must be; the search sees nothing")
	}
	for name, b := range blobs {
		for _, marker := range []string{"MARKER-", "secret words"} {
			if i := bytes.Index(b, []byte(marker)); i >= 0 {
				t.Errorf("%s holds logged text %q at byte %d", name, marker, i)
			}
		}
	}
}

// TestDeterministic: the same case and as_of give byte-identical files.
func TestDeterministic(t *testing.T) {
	db, inc := newCase(t)
	a, resA := writeReport(t, db, inc)
	time.Sleep(1100 * time.Millisecond) // a clock that leaked into an output would now differ
	b, _ := writeReport(t, db, inc)
	for _, p := range resA.Files {
		name := filepath.Base(p)
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if os.Getenv("KEEP_DET") != "" {
			os.WriteFile("/tmp/det_a_"+name, x, 0o644)
			os.WriteFile("/tmp/det_b_"+name, y, 0o644)
		}
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs (%d and %d bytes)", name, len(x), len(y))
		}
	}
}

func TestDeadlineStatus(t *testing.T) {
	deadline := time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)
	at := func(s string) *time.Time { x, _ := time.Parse(time.RFC3339, s); return &x }
	const missing = "required (Art. 33(1)), and not given: set notices.delay_reasons in the incident file (the regulator notice uses leakmap's default wording until then)"
	tests := []struct {
		name       string
		sent       *time.Time
		asOf       time.Time
		reasons    string
		wantStatus string
		wantDelay  string
	}{
		{"sent in time", at("2026-09-10T08:49:00Z"), deadline.Add(100 * time.Hour), "", "yes: regulator notice accepted 10 September 2026, 08:49 UTC", "not applicable"},
		{"sent late", at("2026-09-12T12:30:00Z"), deadline.Add(100 * time.Hour), "", "no: regulator notice accepted 12 September 2026, 12:30 UTC, 2 hours and 30 minutes after the deadline", missing},
		{"sent late, reasons given", at("2026-09-12T12:30:00Z"), deadline.Add(100 * time.Hour), "logs arrived late", "no: regulator notice accepted 12 September 2026, 12:30 UTC, 2 hours and 30 minutes after the deadline", "logs arrived late"},
		{"sent in time, reasons given", at("2026-09-10T08:49:00Z"), deadline.Add(100 * time.Hour), "logs arrived late", "yes: regulator notice accepted 10 September 2026, 08:49 UTC", "not applicable"},
		{"not sent, still open", nil, deadline.Add(-5 * time.Hour), "", "yes, if filed as of 12 September 2026, 05:00 UTC (5 hours before the deadline)", "not applicable"},
		{"not sent, at the deadline", nil, deadline, "", "yes, if filed as of 12 September 2026, 10:00 UTC (0 minutes before the deadline)", "not applicable"},
		{"not sent, missed", nil, deadline.Add(26 * time.Hour), "", "no: as of 13 September 2026, 12:00 UTC the deadline passed 26 hours ago", missing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &filing.Facts{Deadline: &deadline, SentAt: tt.sent, AsOf: tt.asOf}
			f.Judge()
			w := filing.Wording{DelayReasons: tt.reasons}
			if tt.reasons != "" {
				w.Custom = []string{"delay_reasons"}
			}
			status, delay := deadlineStatus(catalog.Get("en"), f, w)
			if status != tt.wantStatus || delay != tt.wantDelay {
				t.Errorf("got (%q, %q), want (%q, %q)", status, delay, tt.wantStatus, tt.wantDelay)
			}
		})
	}
}

var _ = context.Background

// unzipAll returns every part of a zip archive, decompressed.
func unzipAll(t *testing.T, b []byte) []string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, zf := range z.File {
		out = append(out, readZipPart(t, zf))
	}
	return out
}

// Custom wording in English only, with the provider in France: the
// Regulator sheet is French and would have to fill the measures from
// leakmap's own words, so the report stops (exit 2) before it writes a
// file, as notify draft does.
func TestWriteRefusesWordingItsSheetLacks(t *testing.T) {
	db, inc := newCase(t)
	inc.Notices.Wording = map[string]incident.Wording{"en": {MeasuresTaken: []string{"Model withdrawn."}}}
	out := filepath.Join(t.TempDir(), "out")
	_, err := Write(context.Background(), db, nil, inc, out, testAsOf)
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "notices.fr lacks measures_taken") {
		t.Fatalf("got %v, want a usage error naming notices.fr", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused report made %s (%v)", out, err)
	}
	inc.Notices.Wording["fr"] = incident.Wording{MeasuresTaken: []string{"Modèle retiré."}}
	if _, err := Write(context.Background(), db, nil, inc, out, testAsOf); err != nil {
		t.Fatalf("both languages given: %v", err)
	}
}
