package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return strings.TrimSpace(b.String())
}

func TestPage(t *testing.T) {
	db, inc := newCase(t)
	raw, doc := writePage(t, db, inc)

	// Self-contained: no scripts, no external resources of any kind.
	svgs := map[string]*html.Node{}
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "link", "iframe", "img", "object", "embed":
			t.Errorf("page has a <%s> element", n.Data)
		case "svg":
			id, _ := attr(n, "id")
			svgs[id] = n
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") || strings.Contains(a.Val, "url(") {
				t.Errorf("<%s %s=%q>: the page must need nothing else", n.Data, a.Key, a.Val)
			}
		}
	})
	if rest := bytes.ReplaceAll(raw, []byte(`xmlns="http://www.w3.org/2000/svg"`), nil); bytes.Contains(rest, []byte("http")) {
		t.Error("page refers to an http resource")
	}
	for _, id := range []string{"chart-prompt", "chart-daily", "chart-tenants"} {
		n, ok := svgs[id]
		if !ok {
			t.Fatalf("no <svg id=%q>", id)
		}
		// Each SVG must be well-formed XML on its own (a strict parser).
		var b bytes.Buffer
		if err := html.Render(&b, n); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(&b)
		dec.Strict = true
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", id, err)
			}
		}
	}

	// Bars of the per-day chart equal the per-day query.
	var bars [][]string
	walk(svgs["chart-daily"], func(n *html.Node) {
		if c, _ := attr(n, "class"); n.Data == "rect" && c == "bar" {
			d, _ := attr(n, "data-day")
			v, _ := attr(n, "data-value")
			bars = append(bars, []string{d, v})
		}
	})
	var wantBars [][]string
	for _, r := range dbRows(t, db, query("report_daily"), inc.WindowStart, inc.WindowEnd) {
		wantBars = append(wantBars, []string{r[0][:10], r[1]})
	}
	if !reflect.DeepEqual(bars, wantBars) {
		t.Errorf("daily bars = %v, want %v", bars, wantBars)
	}

	// The tenant map has one cell per cross-tenant (recipient, source) pair.
	var cells []string
	walk(svgs["chart-tenants"], func(n *html.Node) {
		if c, _ := attr(n, "class"); n.Data == "rect" && c == "cell" {
			r, _ := attr(n, "data-recipient")
			s, _ := attr(n, "data-source")
			tier, _ := attr(n, "data-tier")
			cells = append(cells, r+" "+s+" "+tier)
		}
	})
	sort.Strings(cells)
	var wantCells []string
	for _, r := range dbRows(t, db, `SELECT recipient_tenant_id, source_tenant_id, arg_min(tier, tier_rank)
		FROM exposures WHERE NOT self_exposure GROUP BY ALL ORDER BY ALL`) {
		wantCells = append(wantCells, strings.Join(r, " "))
	}
	if !reflect.DeepEqual(cells, wantCells) {
		t.Errorf("tenant map cells = %v, want %v", cells, wantCells)
	}

	// The scatter draws every in-scope request (the case is small), triggers apart.
	counts := map[string]int{}
	walk(svgs["chart-prompt"], func(n *html.Node) {
		if c, _ := attr(n, "class"); n.Data == "path" && (c == "requests" || c == "triggers") {
			d, _ := attr(n, "d")
			counts[c] = strings.Count(d, "h0")
		}
	})
	if got, want := counts["triggers"], dbCount(t, db, "SELECT count(*) FROM affected_requests WHERE model = 'glm-5.3'"); int64(got) != want {
		t.Errorf("prompt chart draws %d triggers, want %d", got, want)
	}
	if got, want := counts["requests"]+counts["triggers"], dbCount(t, db, "SELECT count(*) FROM requests WHERE model = 'glm-5.3'"); int64(got) != want {
		t.Errorf("prompt chart draws %d requests, want %d", got, want)
	}

	// Summary figures against independent counts.
	figures := map[string]string{}
	walk(doc, func(n *html.Node) {
		if f, ok := attr(n, "data-figure"); ok && n.Data == "tr" {
			var tds []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "td" {
					tds = append(tds, text(c))
				}
			}
			figures[f] = tds[1]
		}
	})
	for label, q := range map[string]string{
		"Affected requests (triggers)":                            "SELECT count(*) FROM affected_requests",
		"Cross-tenant exposures":                                  "SELECT count(*) FROM exposures WHERE NOT self_exposure",
		"Source tenants (data may have leaked to another tenant)": "SELECT count(DISTINCT source_tenant_id) FROM exposures WHERE NOT self_exposure",
		"Source requests (cross-tenant)":                          "SELECT count(DISTINCT source_row_id) FROM exposures WHERE NOT self_exposure",
		"Rows read":                                               "SELECT sum(rows_read) FROM ingest_files",
		"Notices drafted":                                         "SELECT count(*) FROM notices",
	} {
		if got, want := strings.ReplaceAll(figures[label], ",", ""), fmt.Sprint(dbCount(t, db, q)); got != want {
			t.Errorf("page figure %q = %q, want %s", label, got, want)
		}
	}

	// The tables hold the CSV queries' rows (counts without separators).
	tables := map[string][][]string{}
	walk(doc, func(n *html.Node) {
		name, ok := attr(n, "data-table")
		if !ok {
			return
		}
		walk(n, func(tr *html.Node) {
			if tr.Data != "tr" || tr.Parent.Data != "tbody" {
				return
			}
			var row []string
			for c := tr.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "td" {
					row = append(row, strings.ReplaceAll(text(c), ",", ""))
				}
			}
			tables[name] = append(tables[name], row)
		})
	})
	for name, q := range map[string]string{"Tenants": "out_tenants", "Affected requests": "out_affected_requests", "Join": "report_join", "Rejected rows": "report_rejected"} {
		if got, want := tables[name], dbRows(t, db, query(q)); !reflect.DeepEqual(got, want) {
			t.Errorf("page table %s = %v, want %v", name, got, want)
		}
	}
}

// TestPromptSeriesSampling: above maxPoints the scatter keeps every trigger
// and the shortest and longest other request of each time slice, the same
// rows on every run, and the page says how many it drew.
func TestPromptSeriesSampling(t *testing.T) {
	db, inc := newCase(t)
	oldMax, oldSlices := maxPoints, seriesSlices
	maxPoints, seriesSlices = 50, 10
	defer func() { maxPoints, seriesSlices = oldMax, oldSlices }()
	d, err := loadCase(context.Background(), db, inc, testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	s := d.series
	total := dbCount(t, db, "SELECT count(*) FROM requests WHERE model = 'glm-5.3'")
	triggers := dbCount(t, db, "SELECT count(*) FROM affected_requests")
	if !s.Sampled || s.Total != total || s.Triggers != triggers {
		t.Fatalf("series: sampled %v, total %d (want %d), triggers %d (want %d)", s.Sampled, s.Total, total, s.Triggers, triggers)
	}
	others := int64(len(s.Points)) - s.Triggers
	if lo, hi := int64(seriesSlices), 2*int64(seriesSlices)+2*int64(maxPoints); others < lo || others > hi {
		t.Errorf("kept %d other requests, want between %d and %d (extremes of %d slices and a sample of about %d)", others, lo, hi, seriesSlices, maxPoints)
	}
	if others >= total-triggers {
		t.Errorf("kept all %d other requests: nothing was sampled", others)
	}
	// The longest and shortest in-scope prompts outside triggers are always kept.
	var lo, hi int64
	db.QueryRow(`SELECT min(prompt_tokens), max(prompt_tokens) FROM requests r WHERE model = 'glm-5.3'
		AND row_id NOT IN (SELECT row_id FROM affected_requests)`).Scan(&lo, &hi)
	var seenLo, seenHi bool
	for _, p := range s.Points {
		seenLo = seenLo || (!p.Trigger && p.PromptTokens == lo)
		seenHi = seenHi || (!p.Trigger && p.PromptTokens == hi)
	}
	if !seenLo || !seenHi {
		t.Errorf("the extremes %d and %d are not both kept", lo, hi)
	}
	again, _ := loadCase(context.Background(), db, inc, testAsOf)
	if !reflect.DeepEqual(again.series, s) {
		t.Error("two samplings differ")
	}
	var buf bytes.Buffer
	if err := writeHTML(context.Background(), db, d, &buf, nil, append(evidenceTables(), ledgerTables()...)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Drawn: %d of %d requests", len(s.Points), total)
	if !strings.Contains(buf.String(), want) {
		t.Errorf("page does not say %q", want)
	}
	if want := fmt.Sprintf("sampled: %d of %d requests drawn", len(s.Points), total); !strings.Contains(buf.String(), want) {
		t.Errorf("the chart does not say %q", want)
	}
}

// TestMarkupInIDs: tenant and request ids with markup characters stay text
// in the page (well-formed SVG, no injected element) and in the workbook.
func TestMarkupInIDs(t *testing.T) {
	db, inc := newCase(t)
	const evil = `t-<b>&"x'</b>`
	for _, q := range []string{
		`UPDATE exposures SET source_tenant_id = '` + strings.ReplaceAll(evil, "'", "''") + `' WHERE source_tenant_id = 't-03'`,
		`UPDATE exposures SET recipient_tenant_id = '` + strings.ReplaceAll(evil, "'", "''") + `' WHERE recipient_tenant_id = 't-03'`,
		`UPDATE tenants SET tenant_id = '` + strings.ReplaceAll(evil, "'", "''") + `' WHERE tenant_id = 't-03'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, doc := writePage(t, db, inc)
	var found bool
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "b" {
			t.Error("a tenant id became a <b> element")
		}
		if n.Type == html.TextNode && n.Data == evil {
			found = true
		}
		if n.Type == html.ElementNode && n.Data == "svg" {
			var b bytes.Buffer
			html.Render(&b, n)
			dec := xml.NewDecoder(&b)
			dec.Strict = true
			for {
				if _, err := dec.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("svg not well-formed with markup in ids: %v", err)
				}
			}
		}
	})
	if !found {
		t.Error("the id does not appear as text")
	}
}
