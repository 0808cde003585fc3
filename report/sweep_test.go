package report

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"golang.org/x/net/html"
)

// TestPageSweep: once the case is swept, the per-day chart and sheet show
// the sweep's leaking responses beside the affected requests, over days
// the window does not cover too; unswept, the chart has no sweep dots.
func TestPageSweep(t *testing.T) {
	db, inc := newCase(t)
	dots := func() [][]string {
		out, _ := writeReport(t, db, inc)
		raw, err := os.ReadFile(out + "/report.html")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
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
