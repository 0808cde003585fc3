package report

import (
	"bytes"
	"context"
	"github.com/leakmap/leakmap/internal/csvtest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/ingest"
	"github.com/leakmap/leakmap/simulate"
	"github.com/xuri/excelize/v2"
)

// loadClean ingests a simulated case's logs into a new case at dbPath with
// the real ingest step (a noise-free log takes its fast path).
func loadClean(t testing.TB, ctx context.Context, dir string, dbPath string) string {
	t.Helper()
	db, err := casedb.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ingest.Run(ctx, db, nil, []string{filepath.Join(dir, "logs")}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	return dbPath
}

// TestSimulatedCase runs simulate (with its noise: duplicates, truncated
// lines, mixed offsets) → ingest → analysis → report, and checks the report
// against the simulator's ground truth and the database, and that no
// prompt, response or rejected raw line of the logs reaches an output.
func TestSimulatedCase(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated end-to-end case")
	}
	ctx := context.Background()
	dir := t.TempDir()
	sum, err := simulate.Generate(ctx, nil, dir, simulate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	db, err := casedb.Open(ctx, filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ingest.Run(ctx, db, nil, []string{sum.Logs}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(sum.Incident)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, inc); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	res, err := Write(ctx, db, nil, inc, out, *inc.AsOf)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("REPORT_KEEP"); keep != "" { // a folder to look at the simulated report in
		os.RemoveAll(keep)
		if err := os.CopyFS(keep, os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	if res.AffectedRequests != int64(sum.Triggers) || res.RecipientTenants != int64(sum.Recipients) {
		t.Errorf("report: %d affected requests of %d recipient tenants; truth: %d of %d",
			res.AffectedRequests, res.RecipientTenants, sum.Triggers, sum.Recipients)
	}

	// The Affected requests sheet lists exactly the truth's triggers.
	f, err := excelize.OpenFile(filepath.Join(out, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Affected requests")
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[0])
	}
	truth := csvtest.ReadColumn(t, filepath.Join(dir, "truth", "affected_requests.csv"), "request_id")
	sort.Strings(got)
	sort.Strings(truth)
	if !reflect.DeepEqual(got, truth) {
		t.Errorf("Affected requests sheet: %d ids, truth %d", len(got), len(truth))
	}

	// The Ingest sheet accounts for every line read.
	ing, _ := f.GetRows("Ingest", excelize.Options{RawCellValue: true})
	for _, r := range ing[1:] {
		n := func(i int) int { v, _ := strconv.Atoi(r[i]); return v }
		if n(8) != n(9)+n(10)+n(11) {
			t.Errorf("Ingest %s: read %d != loaded %d + rejected %d + duplicates %d", r[1], n(8), n(9), n(10), n(11))
		}
	}
	if rej := dbCount(t, db, "SELECT count(*) FROM rejected_rows"); rej == 0 {
		t.Error("the noisy simulated logs gave no rejected rows: the raw-text check below checks nothing")
	}

	// No logged text: 24-character pieces of every prompt, response and
	// rejected raw line (a truncated line keeps part of its prompt).
	var texts []string
	for _, r := range dbRows(t, db, `SELECT DISTINCT substr(x, 1 + (length(x) - 24) // 2, 24) FROM (
		SELECT prompt_text AS x FROM requests UNION ALL SELECT response_text FROM requests
		UNION ALL SELECT raw FROM rejected_rows) WHERE length(x) >= 24`) {
		texts = append(texts, r[0])
	}
	if len(texts) == 0 {
		t.Fatal("the simulated logs hold no text")
	}
	var all [][]byte
	for _, p := range res.Files {
		b, _ := os.ReadFile(p)
		all = append(all, b)
	}
	xl, _ := os.ReadFile(filepath.Join(out, "report.xlsx"))
	all = append(all, []byte(strings.Join(unzipAll(t, xl), "")))
	for _, b := range all {
		for _, x := range texts {
			if bytes.Contains(b, []byte(x)) {
				t.Fatalf("an output holds logged text %q", x)
			}
		}
	}
}
