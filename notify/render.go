package notify

import (
	"bytes"
	"fmt"
	"html"
	"reflect"
	"slices"
	"strings"
	"sync"
	texttemplate "text/template"
	"time"
	"unsafe"

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
	// requests counted per tier ("2 confirmed, 18 probable"; "" when the
	// strongest tier is every request's).
	SourceTier, RecipientTier           string
	SourceBreakdown, RecipientBreakdown string
	OwnMatches                          bool // some affected request also read the tenant's own data

	Attachment string
	// The requests the attachment lists: a request both affected and
	// exposed has a row for each role (TwiceListed of them).
	AttachmentRequests, TwiceListed int

	FirstTS      time.Time // span of the listed requests
	LastTS       time.Time
	BeforeWindow int // listed requests received before the window
	Columns      []term
	Values       []termGroup

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
func render(kind, lang string, view any) (rendered, error) { return renderInto(nil, kind, lang, view) }

// renderScratch is one worker's memory for the notices it renders: the
// parts rendered into it hold until its next use (the message copies them).
type renderScratch struct {
	blocks     []block
	lines      []string
	ends       []int // each block's end in lines
	text, html []byte
}

// shed lets go of the buffers larger than scratchKeep.
func (rs *renderScratch) shed() {
	if cap(rs.text)+cap(rs.html) > scratchKeep || cap(rs.lines) > scratchKeep/16 {
		*rs = renderScratch{}
	}
}

// renderInto is render into rs's memory (nil: parts of their own).
func renderInto(rs *renderScratch, kind, lang string, view any) (rendered, error) {
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
	if rs == nil {
		return finishRender(lang, subj, buf.String()), nil
	}
	// The blocks read the buffer itself: it is reused only once they are
	// written out.
	return rs.finish(lang, subj, unsafeString(buf.Bytes())), nil
}

// unsafeString is b as a string, without a copy: b must not change while
// the string is in use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
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
	var rs renderScratch
	r := rs.finish(lang, subj, body)
	r.Text, r.HTML = strings.Clone(r.Text), strings.Clone(r.HTML)
	return r
}

// finish makes the parts of a rendered subject and body; Text and HTML are
// rs's memory.
func (rs *renderScratch) finish(lang, subj, body string) rendered {
	subject := strings.Join(strings.Fields(subj), " ")
	blocks := rs.parseBlocks(body)
	rs.text = appendText(rs.text[:0], blocks)
	rs.html = appendHTML(rs.html[:0], blocks, lang, subject)
	return rendered{Subject: subject, Text: unsafeString(rs.text), HTML: unsafeString(rs.html)}
}

// block is a heading, a paragraph (its lines) or a list (its items).
type block struct {
	kind  byte // '#' title, 'h' heading, 'p' paragraph, 'l' list
	lines []string
}

// parseBlocks reads the notice markup: "# " title, "## " heading, "- "
// list item, other lines paragraph text; a blank line ends a block.
func parseBlocks(s string) []block { return new(renderScratch).parseBlocks(s) }

// parseBlocks is parseBlocks into rs's memory: the blocks hold until its
// next use.
func (rs *renderScratch) parseBlocks(s string) []block {
	out, lines, ends := rs.blocks[:0], rs.lines[:0], rs.ends[:0]
	open := false // the last block takes more lines
	var kind byte
	flush := func() {
		if open {
			out = append(out, block{kind: kind})
			ends = append(ends, len(lines))
			open = false
		}
	}
	one := func(k byte, l string) {
		out = append(out, block{kind: k})
		lines = append(lines, l)
		ends = append(ends, len(lines))
	}
	for {
		l, rest, more := strings.Cut(s, "\n")
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
			one(k, strings.TrimSpace(strings.TrimLeft(l, "#")))
		case strings.HasPrefix(l, "- "):
			if !open || kind != 'l' {
				flush()
				open, kind = true, 'l'
			}
			lines = append(lines, strings.TrimPrefix(l, "- "))
		default:
			if !open || kind != 'p' {
				flush()
				open, kind = true, 'p'
			}
			lines = append(lines, l)
		}
		if !more {
			break
		}
		s = rest
	}
	flush()
	// The blocks' lines, now that lines no longer moves.
	start := 0
	for i := range out {
		out[i].lines = lines[start:ends[i]:ends[i]]
		start = ends[i]
	}
	rs.blocks, rs.lines, rs.ends = out, lines, ends
	return out
}

func textOf(blocks []block) string { return string(appendText(nil, blocks)) }

func appendText(b []byte, blocks []block) []byte {
	n := 1
	for _, bl := range blocks {
		for _, l := range bl.lines {
			n += len(l) + 3
		}
		n += 2
	}
	b = slices.Grow(b, n)
	for i, bl := range blocks {
		if i > 0 {
			b = append(b, "\n\n"...)
		}
		switch bl.kind {
		case 'h':
			b = append(b, upperHeading(bl.lines[0])...)
		case 'l':
			for j, l := range bl.lines {
				if j > 0 {
					b = append(b, '\n')
				}
				b = append(b, "- "...)
				b = append(b, l...)
			}
		default:
			for j, l := range bl.lines {
				if j > 0 {
					b = append(b, '\n')
				}
				b = append(b, l...)
			}
		}
	}
	return append(b, '\n')
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

// appendEsc appends a line escaped for HTML, with the e-mail addresses in
// it linked.
func appendEsc(b []byte, s string) []byte {
	if strings.IndexByte(s, '@') < 0 {
		return appendEscaped(b, s) // no address to link: no copy for the finder
	}
	start := len(b)
	esc := string(appendEscaped(b, s)[start:])
	return appendLinked(b[:start], esc)
}

// appendLinked appends s with each e-mail address in it made a mailto
// link: the leftmost-first matches of emailRE (the tests'
// [A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+), found by hand and
// held to the expression by TestAppendLinkedIsEmailRE.
func appendLinked(b []byte, s string) []byte {
	for {
		a, e, ok := nextEmail(s)
		if !ok {
			return append(b, s...)
		}
		b = append(b, s[:a]...)
		b = append(b, `<a href="mailto:`...)
		b = append(b, s[a:e]...)
		b = append(b, `">`...)
		b = append(b, s[a:e]...)
		b = append(b, `</a>`...)
		s = s[e:]
	}
}

// nextEmail finds emailRE's leftmost-first match in s: the run of local
// characters just before an '@' (the first '@' whose address is whole),
// and after it a label and as many ".label" as follow.
func nextEmail(s string) (start, end int, ok bool) {
	for from := 0; ; {
		j := strings.IndexByte(s[from:], '@')
		if j < 0 {
			return 0, 0, false
		}
		j += from
		a := j
		for a > from && emailLocal(s[a-1]) {
			a--
		}
		e := j + 1
		for e < len(s) && emailLabel(s[e]) {
			e++
		}
		labels := 0
		if e > j+1 {
			for e+1 < len(s) && s[e] == '.' && emailLabel(s[e+1]) {
				e += 2
				for e < len(s) && emailLabel(s[e]) {
					e++
				}
				labels++
			}
		}
		if a < j && labels > 0 {
			return a, e, true
		}
		from = j + 1
	}
}

func emailLabel(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func emailLocal(c byte) bool {
	return emailLabel(c) || c == '.' || c == '_' || c == '%' || c == '+'
}

// appendEscaped appends html.EscapeString(s) without making it first.
func appendEscaped(b []byte, s string) []byte {
	for {
		i := strings.IndexAny(s, `<>&'"`)
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		for _, r := range htmlRefs {
			if r.c == s[i] {
				b = append(b, r.ref...)
				break
			}
		}
		s = s[i+1:]
	}
}

func htmlOf(blocks []block, lang, title string) string {
	return string(appendHTML(nil, blocks, lang, title))
}

func appendHTML(b []byte, blocks []block, lang, title string) []byte {
	n := 256
	for _, bl := range blocks {
		for _, l := range bl.lines {
			n += len(l) + 16
		}
	}
	b = slices.Grow(b, n+n/8)
	b = append(b, "<!DOCTYPE html>\n<html lang=\""...)
	b = append(b, lang...)
	b = append(b, "\">\n<head><meta charset=\"utf-8\"><title>"...)
	b = append(b, html.EscapeString(title)...)
	b = append(b, "</title></head>\n<body>\n"...)
	line := func(open, l, close string) {
		b = append(b, open...)
		b = appendEsc(b, l)
		b = append(b, close...)
	}
	for _, bl := range blocks {
		switch bl.kind {
		case '#':
			line("<h1>", bl.lines[0], "</h1>\n")
		case 'h':
			line("<h2>", bl.lines[0], "</h2>\n")
		case 'l':
			b = append(b, "<ul>\n"...)
			for _, l := range bl.lines {
				line("<li>", l, "</li>\n")
			}
			b = append(b, "</ul>\n"...)
		default:
			b = append(b, "<p>"...)
			for i, l := range bl.lines {
				if i > 0 {
					b = append(b, "<br>\n"...)
				}
				b = appendEsc(b, l)
			}
			b = append(b, "</p>\n"...)
		}
	}
	return append(b, "</body>\n</html>\n"...)
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
	return filing.CheckWording(inc, need, "tenant(s) of the tenant directory")
}
