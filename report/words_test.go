package report

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/templates"
	"golang.org/x/net/html"
)

// The page template holds no words: with its actions, tags and entities
// taken out, only punctuation and spaces are left. Every word of the page
// comes from the catalogue.
func TestPageTemplateHasNoWords(t *testing.T) {
	for _, name := range []string{"report/page.html", "report/style.html"} {
		raw, err := templates.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s := regexp.MustCompile(`(?s)\{\{.*?\}\}`).ReplaceAllString(string(raw), " ")
		s = regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(s, " ")
		if name == "report/style.html" {
			s = "" // CSS: no text a reader sees (checked: no content: property)
			if bytes.Contains(raw, []byte("content:")) {
				t.Errorf("%s: a content: property writes words outside the catalogue", name)
			}
		}
		s = regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(s, " ")
		s = regexp.MustCompile(`&[a-z#0-9]+;`).ReplaceAllString(s, " ")
		if words := regexp.MustCompile(`\pL{2,}`).FindAllString(s, -1); len(words) > 0 {
			t.Errorf("templates/%s writes words outside the catalogue: %q", name, words)
		}
	}
}

// The page is in the report's language (English); the Regulator section is
// in the filing's (the test provider is in France): its heading and column
// labels are the French catalogue's, and it says so (lang="fr").
func TestPageLanguages(t *testing.T) {
	db, inc := newCase(t)
	raw, doc := writePage(t, db, inc)
	en, fr := catalog.Get("en"), catalog.Get("fr")
	var reg *html.Node
	var h1 string
	var h2s []string
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "html":
			if lang, _ := attr(n, "lang"); lang != "en" {
				t.Errorf(`<html lang=%q>, want "en"`, lang)
			}
		case "h1":
			h1 = text(n)
		case "h2":
			h2s = append(h2s, text(n))
		case "section":
			if id, _ := attr(n, "id"); id == "regulator" {
				reg = n
			}
		}
	})
	if want := en.MustT("report.page.heading_title", "id", inc.ID, "title", inc.Title); h1 != want {
		t.Errorf("h1 = %q, want %q", h1, want)
	}
	for _, k := range []string{"prompt_length", "per_day", "summary", "tenant_map", "timeline"} {
		if w := en.MustT("report.page." + k); !slices.Contains(h2s, w) {
			t.Errorf("no heading %q (headings: %q)", w, h2s)
		}
	}
	if reg == nil {
		t.Fatal("no Regulator section")
	}
	if lang, _ := attr(reg, "lang"); lang != "fr" {
		t.Errorf(`Regulator section lang=%q, want "fr"`, lang)
	}
	var regH2 string
	var ths, tds []string
	walk(reg, func(n *html.Node) {
		switch n.Data {
		case "h2":
			regH2 = text(n)
		case "th":
			ths = append(ths, text(n))
		case "td":
			tds = append(tds, text(n))
		}
	})
	if want := fr.MustT("sheet.heading"); regH2 != want {
		t.Errorf("Regulator heading %q, want the French catalogue's %q", regH2, want)
	}
	if want := fr.List("sheet.columns"); !slices.Equal(ths, want) {
		t.Errorf("Regulator columns %q, want %q", ths, want)
	}
	// Its labels and bases are French: none of the English sheet's.
	for _, k := range []string{"sheet.basis_case", "sheet.section.times", "sheet.filing_type", "sheet.heading"} {
		if w := en.MustT(k); slices.Contains(tds, w) || regH2 == w {
			t.Errorf("Regulator section holds the English %q", w)
		}
	}
	// The incident's title is English (the report's): the section gives
	// leakmap's French title instead, the incident file giving no
	// notices.fr.title.
	if slices.Contains(tds, inc.Title) {
		t.Errorf("Regulator section holds the English title %q", inc.Title)
	}
	if w := fr.MustT("wording.title", "models", "glm-5.3"); !slices.Contains(tds, w) {
		t.Errorf("Regulator section lacks the French title %q", w)
	}
	if !slices.Contains(tds, fr.MustT("sheet.basis_case")) {
		t.Errorf("Regulator section lacks the French basis %q", fr.MustT("sheet.basis_case"))
	}
	// The timeline's events are the catalogue's words, not the query's keys.
	if !bytes.Contains(raw, []byte(">"+en.MustT("report.timeline.event.window_start")+"<")) ||
		bytes.Contains(raw, []byte(">window_start<")) {
		t.Error("the timeline does not write its events in the catalogue's words")
	}
}

// The charts take every word from the catalogue they are drawn with: drawn
// with the French one, no English word is left in their text.
func TestChartWordsFromCatalogue(t *testing.T) {
	db, inc := newCase(t)
	d, err := loadCase(context.Background(), db, inc, testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	fr := catalog.Get("fr")
	svgMap, note := tenantMap(fr, d.tmap)
	english := regexp.MustCompile(`(?i)\b(the|of|and|on|more|requests?|affected|pool|sampled|exposures?|window|hosts?|rows|columns|self|leak|default|context|prompt|tokens|discovered|aware|contained|leaking|responses?|sweep|over|time|scale|recipients?|tenants?|strongest|tier)\b`)
	for name, svg := range map[string]string{"prompt": promptChart(fr, d), "daily": dailyChart(fr, d.days), "map": svgMap + note} {
		doc, err := html.Parse(strings.NewReader(svg))
		if err != nil {
			t.Fatal(err)
		}
		walk(doc, func(n *html.Node) {
			if n.Type != html.TextNode {
				return
			}
			s := n.Data
			for _, id := range slices.Concat(inc.Models, []string{"prefill-b"}, tenantIDs(d)) {
				s = strings.ReplaceAll(s, id, "")
			}
			if w := english.FindString(s); w != "" {
				t.Errorf("%s chart drawn in French writes English %q in %q", name, w, n.Data)
			}
		})
	}
}

func tenantIDs(d *caseData) []string {
	return append(slices.Clone(d.tmap.Recipients), d.tmap.Sources...)
}
