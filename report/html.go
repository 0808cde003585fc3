package report

import (
	"context"
	"database/sql"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
	"github.com/leakmap/leakmap/templates"
)

var (
	pageOnce sync.Once
	pageTmpl *template.Template
	pageErr  error
)

// page parses templates/report/*.html once.
func page() (*template.Template, error) {
	pageOnce.Do(func() {
		pageTmpl, pageErr = template.New("report").Funcs(template.FuncMap{
			"tierColor": func(t string) string { return tierColor[t] },
			"value":     formatValue,
			"num":       thousands,
			"utc":       incident.FormatTime,
			"cell":      cellHTML,
		}).ParseFS(templates.FS, "report/*.html")
	})
	return pageTmpl, pageErr
}

// Row caps of the page's tables: the page is for reading at a glance, the
// workbook and the exports hold every row.
var htmlRowCap = map[string]int{
	"Tenants": 500, "Exposures": 300, "Affected requests": 500, "Ingest": 500, "Join": 200, "Rejected rows": 200,
}

type htmlTable struct {
	ID    string
	Title string
	Cols  []string
	Num   []bool
	Class []string // per column: num, hash, path, nowrap or ""
	Rows  [][]string
	Total int64
}

func (t htmlTable) Truncated() bool { return int64(len(t.Rows)) < t.Total }

type sumGroup struct {
	Name  string
	Items []fmtItem
}

type fmtItem struct {
	Label, Value string
	Num          bool
}

type pageData struct {
	ID, Title, AsOf, Models string
	WindowStart, WindowEnd  string
	Lang, RegLang           string   // the page's language; the Regulator section's (the filing's)
	RegColumns              []string // the Regulator section's column labels
	FileList                string
	Headline                []fmtItem
	Summary                 []sumGroup
	Tiers                   []TierRow
	Regulator               []RegField
	Timeline                []Event
	PromptSVG               template.HTML
	PromptNote              string
	DailySVG                template.HTML
	Swept                   bool // the case was swept: the chart has the sweep's leaking responses
	MapSVG                  template.HTML
	MapNote                 string
	Tables                  []htmlTable
	Files                   []string

	cat, reg *catalog.Catalog
}

// T writes a message of the page's catalogue; R one of the Regulator
// section's (the filing's language).
func (p *pageData) T(key string, args ...any) (string, error) { return p.cat.T(key, args...) }

// R writes a message of the Regulator section's catalogue.
func (p *pageData) R(key string, args ...any) (string, error) { return p.reg.T(key, args...) }

// RegValue writes a Regulator value as the filing's language groups
// digits; times stay RFC 3339, as in the sheet.
func (p *pageData) RegValue(v any) string {
	if n, ok := v.(int64); ok {
		return p.reg.Number(n)
	}
	return formatValue(v)
}

// reportLang is the language of the report (page and workbook): the
// provider's internal document, in English. Its Regulator sheet and section
// are in the filing's language (filing.Language), the regulator notice's.
const reportLang = "en"

func reportCatalog() *catalog.Catalog { return catalog.Get(reportLang) }

// writeHTML renders report.html from the case data and capped queries of
// the sheets' tables.
func writeHTML(ctx context.Context, db *sql.DB, d *caseData, w io.Writer, files []string, tables []table) error {
	t, err := page()
	if err != nil {
		return fmt.Errorf("report templates: %w", err)
	}
	s := d.summary
	c, reg := reportCatalog(), catalog.Get(filing.Language(d.inc))
	p := pageData{
		ID: d.inc.ID, Title: d.inc.Title, AsOf: incident.FormatTime(d.asOf),
		WindowStart: incident.FormatTime(d.inc.WindowStart), WindowEnd: incident.FormatTime(d.inc.WindowEnd),
		Lang: c.Lang, RegLang: reg.Lang, RegColumns: reg.List("sheet.columns"), cat: c, reg: reg,
		Regulator: d.reg, Timeline: d.timeline, Tiers: d.tiers, Files: files,
		FileList: strings.Join(files, c.MustT("common.list_sep")),
		DailySVG: template.HTML(dailyChart(c, d.days)), Swept: sweptCase(d.days),
	}
	p.Headline = []fmtItem{
		{c.MustT("report.headline.affected_requests"), thousands(s.AffectedRequests), true},
		{c.MustT("report.headline.recipient_tenants"), thousands(s.RecipientTenants), true},
		{c.MustT("report.headline.source_tenants"), thousands(s.SourceTenants), true},
		{c.MustT("report.headline.cross_tenant_exposures"), thousands(s.CrossExposures), true},
		{c.MustT("report.headline.notices_drafted"), thousands(s.NoticesDrafted), true},
		{c.MustT("report.headline.notices_sent"), thousands(s.NoticesSent), true},
	}
	for _, it := range summaryItems(d) {
		if len(p.Summary) == 0 || p.Summary[len(p.Summary)-1].Name != it.Group {
			p.Summary = append(p.Summary, sumGroup{Name: it.Group})
		}
		g := &p.Summary[len(p.Summary)-1]
		_, num := it.Value.(int64)
		g.Items = append(g.Items, fmtItem{it.Label, formatValue(it.Value), num})
	}
	p.PromptSVG = template.HTML(promptChart(c, d))
	if d.series.Sampled {
		p.PromptNote = c.MustT("report.prompt_note_sampled", "drawn", int64(len(d.series.Points)), "total", d.series.Total,
			"triggers", d.series.Triggers, "every", max(1, d.series.Total/int64(maxPoints)), "slices", int64(seriesSlices))
	} else {
		p.PromptNote = c.MustT("report.prompt_note_all", "total", d.series.Total, "triggers", d.series.Triggers)
	}
	mapSVG, mapNote := tenantMap(c, d.tmap)
	p.MapSVG, p.MapNote = template.HTML(mapSVG), mapNote
	for i, tb := range tables {
		ht, err := htmlRows(ctx, db, tb, htmlRowCap[tb.sheet])
		if err != nil {
			return fmt.Errorf("%s table: %w", tb.sheet, err)
		}
		ht.ID = fmt.Sprintf("table-%d", i+1)
		p.Tables = append(p.Tables, ht)
	}
	return t.ExecuteTemplate(w, "page", &p)
}

func htmlRows(ctx context.Context, db *sql.DB, tb table, limit int) (htmlTable, error) {
	ht := htmlTable{Title: tb.sheet}
	for _, c := range tb.cols {
		ht.Cols = append(ht.Cols, c.name)
		ht.Num = append(ht.Num, c.kind == kInt || c.kind == kID)
		ht.Class = append(ht.Class, cellClass(c))
	}
	if err := db.QueryRowContext(ctx, tb.countSQL()).Scan(&ht.Total); err != nil {
		return ht, err
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT * FROM (%s) LIMIT %d", tb.sql, limit))
	if err != nil {
		return ht, err
	}
	defer rows.Close()
	sc := newScanner(tb.cols)
	vals := make([]any, len(tb.cols))
	for rows.Next() {
		if err := sc.scan(rows, vals); err != nil {
			return ht, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if tb.cols[i].kind == kID && v != nil {
				row[i] = fmt.Sprint(v)
			} else {
				row[i] = formatValue(v)
			}
		}
		ht.Rows = append(ht.Rows, row)
	}
	return ht, rows.Err()
}

// cellClass says how a column's cells may break when printed: numbers,
// times, tiers, roles and flags never; a SHA-256 only at its middle; a path
// only after a '/' (so neither falls apart into 4-character pieces).
func cellClass(c column) string {
	switch {
	case c.kind == kInt || c.kind == kID:
		return "num"
	case c.name == "sha256":
		return "hash"
	case c.name == "path":
		return "path"
	case c.kind == kTime || c.kind == kDate || c.kind == kBool,
		strings.Contains(c.name, "tier"), c.name == "role", c.name == "format", c.name == "compression", c.name == "preset", c.name == "outcome":
		return "nowrap"
	}
	return ""
}

// cellHTML writes a cell's value with the only break points its class
// allows (<wbr>): the middle of a hash, after each '/' of a path.
func cellHTML(class, v string) template.HTML {
	esc := template.HTMLEscapeString
	switch class {
	case "hash":
		if len(v) == 64 {
			return template.HTML(esc(v[:32]) + "<wbr>" + esc(v[32:]))
		}
	case "path":
		parts := strings.SplitAfter(v, "/")
		for i := range parts {
			parts[i] = esc(parts[i])
		}
		return template.HTML(strings.Join(parts, "<wbr>"))
	}
	return template.HTML(esc(v))
}
