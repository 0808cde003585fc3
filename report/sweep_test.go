package report

import (
	"archive/zip"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"golang.org/x/net/html"
)

// TestPageSweep: once the case is swept, the per-day chart and sheet show
// the sweep's leaking responses beside the affected requests, over days
// the window does not cover too; unswept, the chart has no sweep dots.
func TestPageSweep(t *testing.T) {
	db, inc := newCase(t)
	dots := func() [][]string {
		_, doc := writePage(t, db, inc)
		var got [][]string
		walk(doc, func(n *html.Node) {
			if c, _ := attr(n, "class"); n.Data == "circle" && c == "sweep" {
				d, _ := attr(n, "data-day")
				v, _ := attr(n, "data-value")
				got = append(got, []string{d, v})
			}
		})
		return got
	}
	if got := dots(); len(got) != 0 {
		t.Fatalf("unswept case: sweep dots %v", got)
	}
	before := inc.WindowStart.AddDate(0, 0, -3).Format("2006-01-02")
	start := inc.WindowStart.Format("2006-01-02")
	if _, err := db.Exec(`INSERT INTO sweep_days VALUES (CAST(? AS DATE), 'm1', 40, 2, 1, 1), (CAST(? AS DATE), 'm1', 50, 1, 1, 1), (CAST(? AS DATE), 'm2', 9, 3, 2, 1)`,
		before, start, start); err != nil {
		t.Fatal(err)
	}
	got := dots()
	var want [][]string
	for _, r := range dbRows(t, db, query("report_daily"), inc.WindowStart, inc.WindowEnd) {
		want = append(want, []string{r[0][:10], r[4]})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sweep dots %v, want %v", got, want)
	}
	if len(got) == 0 || got[0][0] != before || got[0][1] != "2" {
		t.Errorf("first day %v, want %s with 2 leaking responses (before the window)", got[:min(1, len(got))], before)
	}
	for _, d := range got {
		if d[0] == start && d[1] != "4" {
			t.Errorf("%s: %s leaking responses, want 4 (both models)", start, d[1])
		}
	}
}

// TestWorkbookSweepSeries: the workbook read back. Once the case is swept,
// the Summary chart has a second series, the sweep's leaking responses,
// referencing the Per day sheet's sweep column, and both the sheet's cells
// and the chart's cached values equal report_daily.sql's rows (the query
// the page's dots come from); unswept, the chart has one series.
func TestWorkbookSweepSeries(t *testing.T) {
	db, inc := newCase(t)
	read := func() (chart string, perDay [][]string) {
		out, _ := writeReport(t, db, inc)
		z, err := zip.OpenReader(filepath.Join(out, "report.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		for _, f := range z.File {
			if f.Name == "xl/charts/chart1.xml" {
				rc, _ := f.Open()
				b, _ := io.ReadAll(rc)
				rc.Close()
				chart = string(b)
			}
		}
		x, err := excelize.OpenFile(filepath.Join(out, "report.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		if perDay, err = x.GetRows("Per day", excelize.Options{RawCellValue: true}); err != nil {
			t.Fatal(err)
		}
		return chart, perDay
	}
	chart, _ := read()
	if n := strings.Count(chart, "<ser>"); n != 1 || strings.Contains(chart, "$E$") {
		t.Fatalf("unswept case: %d series, sweep column referenced %v", n, strings.Contains(chart, "$E$"))
	}
	before := inc.WindowStart.AddDate(0, 0, -2).Format("2006-01-02")
	if _, err := db.Exec(`INSERT INTO sweep_days VALUES (CAST(? AS DATE), 'm1', 40, 2, 1, 1), (CAST(? AS DATE), 'm1', 50, 1, 1, 1), (CAST(? AS DATE), 'm2', 9, 3, 2, 1)`,
		before, inc.WindowStart.Format("2006-01-02"), inc.WindowStart.Format("2006-01-02")); err != nil {
		t.Fatal(err)
	}
	chart, perDay := read()
	want := dbRows(t, db, query("report_daily"), inc.WindowStart, inc.WindowEnd)
	if n := strings.Count(chart, "<ser>"); n != 2 || !strings.Contains(chart, "!$E$2:$E$"+strconv.Itoa(len(want)+1)+"</f>") {
		t.Fatalf("swept case: %d series, want 2 with the sweep column E2:E%d:\n%s", n, len(want)+1, chart)
	}
	if len(perDay) != len(want)+1 || len(perDay[0]) < 5 || perDay[0][4] != "sweep_leaking_responses" {
		t.Fatalf("Per day sheet: %d rows (want %d), header %v", len(perDay), len(want)+1, perDay[0])
	}
	// The second series' cache: after the first series' values.
	second := chart[strings.LastIndex(chart, "<numCache>"):]
	for i, r := range want {
		if perDay[i+1][4] != r[4] {
			t.Errorf("Per day row %d (%s): sweep %q, query %q", i+2, r[0][:10], perDay[i+1][4], r[4])
		}
		if !strings.Contains(second, `<pt idx="`+strconv.Itoa(i)+`"><v>`+r[4]+`</v></pt>`) {
			t.Errorf("chart's sweep series lacks day %s = %s", r[0][:10], r[4])
		}
	}
	if want[0][4] != "2" || want[0][0][:10] != before {
		t.Errorf("first day %v, want %s with 2 leaking responses", want[0], before)
	}
}
