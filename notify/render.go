package notify

import (
	"bytes"
	"fmt"
	"html"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	texttemplate "text/template"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
	"github.com/leakmap/leakmap/templates"
)

// Languages the notices are written in: those of the message catalogue.
var languages = catalog.Languages

// tenantView is everything a tenant notice may show: the tenant's own
// figures and the incident, never another tenant. Times are written in
// prose by the catalogue; the attachment keeps RFC 3339.
type tenantView struct {
	Supersedes   bool // a correction of a notice already accepted
	IncidentID   string
	ProviderName string
	Contact      string // DPO address, else the provider's security contact
	ContactIsDPO bool
	Greeting     string // the tenant's name, or "" for a generic greeting

	WindowStart, WindowEnd    time.Time
	DiscoveredAt, ContainedAt *time.Time
	AsOf                      time.Time
	DeletionDeadline          time.Time

	// Roles: Source (its data may have reached another tenant), Recipient
	// (it may have received another tenant's data), SelfOnly (affected, but
	// only ever by its own data: no cross-tenant wording at all).
	Source, Recipient, SelfOnly bool
	ExposedRequests             int
	AffectedRequests            int
	// The strongest cross-tenant tier per role ("" when none), and the
	// requests counted per tier ("2 confirmed, 18 probable").
	SourceTier, RecipientTier           string
	SourceBreakdown, RecipientBreakdown string
	OwnMatches                          bool // some affected request also read the tenant's own data

	Attachment     string
	AttachmentRows int
	FirstTS        time.Time // span of the listed requests
	LastTS         time.Time
	BeforeWindow   int // listed requests received before the window
	Columns        []term
	Values         []termGroup

	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
}

// term is a word of the attachment and what it means.
type term struct{ Name, Meaning string }

// termGroup is the values of one attachment column that occur in it.
type termGroup struct {
	Column string
	Intro  string // replaces "the values in column X:" when set
	Terms  []term
}

// regulatorView is the content of the regulator notice: the filing facts
// (shared with the Regulator sheet) and the timeline; no tenant.
type regulatorView struct {
	Supersedes                                bool // a correction of a notice already accepted
	IncidentID, ProviderName, ProviderCountry string
	Contact                                   string
	ContactIsDPO                              bool

	F *filing.Facts

	LaunchedAt, DiscoveredAt, AwareAt, ContainedAt *time.Time
	WindowStart, WindowEnd, AsOf                   time.Time
	LateBy                                         string // in words, "" when met

	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
	DelayReasons    string
}

// rendered is one notice's subject and bodies.
type rendered struct {
	Subject, Text, HTML string
}

var (
	parseOnce sync.Once
	parsed    map[string]*noticeTemplate // key: kind.lang
	parseErr  error
)

// noticeTemplate is one kind's template in one language: text/template's
// parse of it, and "subject" and "body" compiled from that parse
// (compiled.go), which is what render runs.
type noticeTemplate struct {
	tt            *texttemplate.Template
	view          reflect.Type
	subject, body cnode
}

// viewTypes are the views the kinds' templates are compiled against.
var viewTypes = map[string]reflect.Type{"tenant": reflect.TypeFor[tenantView](), "regulator": reflect.TypeFor[regulatorView]()}

// funcs bind a template to one language's catalogue.
func funcs(c *catalog.Catalog) texttemplate.FuncMap {
	return texttemplate.FuncMap{
		"t":     c.T,
		"day":   c.Date,
		"list":  func(items []string) string { return strings.Join(items, c.MustT("common.list_sep")) },
		"items": c.List,
	}
}

func loadTemplates() (map[string]*noticeTemplate, error) {
	parseOnce.Do(func() {
		parsed = map[string]*noticeTemplate{}
		for _, kind := range []string{"tenant", "regulator"} {
			for _, lang := range languages {
				c, err := catalog.Load(lang)
				if err != nil {
					parseErr = err
					return
				}
				file := "notify/" + kind + ".tmpl"
				t, err := texttemplate.New(kind).Funcs(funcs(c)).Option("missingkey=error").ParseFS(templates.FS, file)
				if err != nil {
					parseErr = fmt.Errorf("notice templates: %w", err)
					return
				}
				nt := &noticeTemplate{tt: t, view: viewTypes[kind]}
				for name, dst := range map[string]*cnode{"subject": &nt.subject, "body": &nt.body} {
					sub := t.Lookup(name)
					if sub == nil || sub.Tree == nil {
						parseErr = fmt.Errorf("notice templates: %s defines no %q", file, name)
						return
					}
					if *dst, err = compileTemplate(file, sub.Tree, c, nt.view); err != nil {
						parseErr = fmt.Errorf("notice templates: %s (%s): %w", name, lang, err)
						return
					}
				}
				parsed[kind+"."+lang] = nt
			}
		}
	})
	return parsed, parseErr
}

func lookupTemplate(kind, lang string) (*noticeTemplate, error) {
	sets, err := loadTemplates()
	if err != nil {
		return nil, err
	}
	t, ok := sets[kind+"."+lang]
	if !ok {
		return nil, fmt.Errorf("no %s template in language %q", kind, lang)
	}
	return t, nil
}

// render runs the kind's compiled template with lang's catalogue:
// "subject", and "body", from which the text and the HTML part are both
// made.
func render(kind, lang string, view any) (rendered, error) {
	t, err := lookupTemplate(kind, lang)
	if err != nil {
		return rendered{}, err
	}
	dot := reflect.ValueOf(view)
	if dot.Type() != t.view {
		return rendered{}, fmt.Errorf("%s.%s: a %s, not a %s", kind, lang, dot.Type(), t.view)
	}
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer renderBuffers.Put(buf)
	buf.Reset()
	if err := t.subject(buf, dot); err != nil {
		return rendered{}, fmt.Errorf("%s.%s subject: %w", kind, lang, err)
	}
	subj := buf.String()
	buf.Reset()
	if err := t.body(buf, dot); err != nil {
		return rendered{}, fmt.Errorf("%s.%s body: %w", kind, lang, err)
	}
	return finishRender(lang, subj, buf.String()), nil
}

// renderBuffers are the buffers the templates run into, reused: their
// output is copied out once.
var renderBuffers = sync.Pool{New: func() any { b := new(bytes.Buffer); b.Grow(16 << 10); return b }}

// renderTextTemplate is render through text/template itself, which the
// tests hold the compiled templates to.
func renderTextTemplate(kind, lang string, view any) (rendered, error) {
	t, err := lookupTemplate(kind, lang)
	if err != nil {
		return rendered{}, err
	}
	var subj, body bytes.Buffer
	if err := t.tt.ExecuteTemplate(&subj, "subject", view); err != nil {
		return rendered{}, fmt.Errorf("%s.%s subject: %w", kind, lang, err)
	}
	if err := t.tt.ExecuteTemplate(&body, "body", view); err != nil {
		return rendered{}, fmt.Errorf("%s.%s body: %w", kind, lang, err)
	}
	return finishRender(lang, subj.String(), body.String()), nil
}

func finishRender(lang, subj, body string) rendered {
	subject := strings.Join(strings.Fields(subj), " ")
	blocks := parseBlocks(body)
	return rendered{Subject: subject, Text: textOf(blocks), HTML: htmlOf(blocks, lang, subject)}
}

// block is a heading, a paragraph (its lines) or a list (its items).
type block struct {
	kind  byte // '#' title, 'h' heading, 'p' paragraph, 'l' list
	lines []string
}

// parseBlocks reads the notice markup: "# " title, "## " heading, "- "
// list item, other lines paragraph text; a blank line ends a block.
func parseBlocks(s string) []block {
	var out []block
	var cur *block
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " \t\r")
		switch {
		case l == "":
			flush()
		case strings.HasPrefix(l, "# "), strings.HasPrefix(l, "## "):
			flush()
			k := byte('h')
			if l[1] == ' ' {
				k = '#'
			}
			out = append(out, block{kind: k, lines: []string{strings.TrimSpace(strings.TrimLeft(l, "#"))}})
		case strings.HasPrefix(l, "- "):
			if cur == nil || cur.kind != 'l' {
				flush()
				cur = &block{kind: 'l'}
			}
			cur.lines = append(cur.lines, strings.TrimPrefix(l, "- "))
		default:
			if cur == nil || cur.kind != 'p' {
				flush()
				cur = &block{kind: 'p'}
			}
			cur.lines = append(cur.lines, l)
		}
	}
	flush()
	return out
}

func textOf(blocks []block) string {
	var b strings.Builder
	n := 1
	for _, bl := range blocks {
		for _, l := range bl.lines {
			n += len(l) + 3
		}
		n += 2
	}
	b.Grow(n)
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString("\n\n")
		}
		switch bl.kind {
		case 'h':
			b.WriteString(upperHeading(bl.lines[0]))
		case 'l':
			for j, l := range bl.lines {
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString("- ")
				b.WriteString(l)
			}
		default:
			for j, l := range bl.lines {
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(l)
			}
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// upperHeading capitalises a heading for the text part, keeping a leading
// item marker as written ("(a) Nature" -> "(a) NATURE").
func upperHeading(h string) string {
	if strings.HasPrefix(h, "(") {
		if i := strings.Index(h, ") "); i > 0 && i < 5 {
			return h[:i+2] + strings.ToUpper(h[i+2:])
		}
	}
	return strings.ToUpper(h)
}

var emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`)

// writeEsc writes a line escaped for HTML, with the e-mail addresses in
// it linked.
func writeEsc(b *strings.Builder, s string) {
	s = html.EscapeString(s)
	if strings.IndexByte(s, '@') < 0 {
		b.WriteString(s) // no address to link (the regexp is most of the rendering's time)
		return
	}
	b.WriteString(emailRE.ReplaceAllStringFunc(s, func(a string) string {
		return `<a href="mailto:` + a + `">` + a + `</a>`
	}))
}

func htmlOf(blocks []block, lang, title string) string {
	var b strings.Builder
	n := 256
	for _, bl := range blocks {
		for _, l := range bl.lines {
			n += len(l) + 16
		}
	}
	b.Grow(n + n/8)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"")
	b.WriteString(lang)
	b.WriteString("\">\n<head><meta charset=\"utf-8\"><title>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title></head>\n<body>\n")
	line := func(open, l, close string) {
		b.WriteString(open)
		writeEsc(&b, l)
		b.WriteString(close)
	}
	for _, bl := range blocks {
		switch bl.kind {
		case '#':
			line("<h1>", bl.lines[0], "</h1>\n")
		case 'h':
			line("<h2>", bl.lines[0], "</h2>\n")
		case 'l':
			b.WriteString("<ul>\n")
			for _, l := range bl.lines {
				line("<li>", l, "</li>\n")
			}
			b.WriteString("</ul>\n")
		default:
			b.WriteString("<p>")
			for i, l := range bl.lines {
				if i > 0 {
					b.WriteString("<br>\n")
				}
				writeEsc(&b, l)
			}
			b.WriteString("</p>\n")
		}
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

// CheckWording refuses, before any work, custom wording that leaves out a
// language the tenant directory or the regulator notice is in (exit 2): the
// check notify draft makes on the case's tenants, made on every tenant of
// the directory, so that 'leakmap run' stops before it writes anything.
// Draft still checks the case's own tenants (one missing from the directory
// is written to in English).
func CheckWording(inc *incident.Incident, dir *Directory) error {
	need := map[string]int{}
	for _, id := range dir.IDs() {
		need[tenantLanguage(dir, id)]++
	}
	return checkWording(inc, need, filing.Language(inc), "tenant(s) of the tenant directory")
}

// checkWording refuses custom wording that leaves out a language the
// outbox needs: every language that has notices must give the keys any
// language gives (delay_reasons only in the regulator notice's language),
// never filled from another language. need counts tenants per language,
// who names them (for the message); the regulator notice is in regLang.
func checkWording(inc *incident.Incident, need map[string]int, regLang, who string) error {
	given := map[string]bool{}
	for _, w := range inc.Notices.Wording {
		for _, k := range w.Keys() {
			given[k] = true
		}
	}
	if len(given) == 0 {
		return nil
	}
	langs := []string{regLang}
	for l := range need {
		if l != regLang {
			langs = append(langs, l)
		}
	}
	sort.Strings(langs)
	var problems []string
	for _, l := range langs {
		have := map[string]bool{}
		for _, k := range inc.Notices.Wording[l].Keys() {
			have[k] = true
		}
		var missing []string
		for _, k := range incident.WordingKeys {
			if given[k] && !have[k] && (k != "delay_reasons" || l == regLang) {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			continue
		}
		var users []string
		if need[l] > 0 {
			users = append(users, fmt.Sprintf("%d %s", need[l], who))
		}
		if l == regLang {
			users = append(users, "the regulator notice")
		}
		problems = append(problems, fmt.Sprintf("notices.%s lacks %s, needed by %s in %s", l, strings.Join(missing, ", "), strings.Join(users, " and "), l))
	}
	if len(problems) == 0 {
		return nil
	}
	return errs.Usage("incident %s: custom notice wording leaves out a language the notices need (%s): give the same keys in every language, or none for leakmap's own words",
		inc.Path, strings.Join(problems, "; "))
}
