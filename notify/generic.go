package notify

import (
	"html"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/templates"
)

// Identifiers too generic to tell apart from the words a notice writes
// itself. A tenant id "2026" or a name "Security" or "Data" is found, as
// words, in every notice: the dates, the counts and the templates' own
// sentences. Such an identifier (every word of it a number, a word of
// leakmap's own templates and wording, or a word of the provider's own
// name, addresses, incident id and title) is "generic": the check looks for
// it only where identifiers appear, as a whole unit of the notice (see
// units), never inside running text. Every other identifier is matched as
// a word sequence anywhere, as before.

// vocabulary is a set of normalised words.
type vocabulary map[string]struct{}

func (v vocabulary) add(s string) {
	for _, w := range words(s) {
		v[w] = struct{}{}
	}
}

// ordinary reports whether every word of an identifier is a number or a
// word of the vocabulary.
func (v vocabulary) ordinary(ws []string) bool {
	for _, w := range ws {
		if _, ok := v[w]; !ok && !isNumber(w) {
			return false
		}
	}
	return len(ws) > 0
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// maxUnitWords bounds the units compared whole: no identifier is longer.
const maxUnitWords = 12

var (
	builtinOnce  sync.Once
	builtinWords vocabulary
	builtinUnits map[digest]bool // units the templates write themselves
)

// builtin returns the words and the whole units leakmap's own templates and
// wording write: every embedded template and message catalogue file (all
// of leakmap's words), with template actions and HTML tags taken out.
func builtin() (vocabulary, map[digest]bool) {
	builtinOnce.Do(func() {
		builtinWords, builtinUnits = vocabulary{}, map[digest]bool{}
		x := newHasher()
		addText := func(s string) {
			builtinWords.add(s)
			for _, u := range units(s) {
				if w := words(u.text); len(w) > 0 && len(w) <= maxUnitWords {
					builtinUnits[x.kgram(w)] = true
				}
			}
		}
		_ = fs.WalkDir(templates.FS, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(path, "catalog/") {
				return err
			}
			b, err := fs.ReadFile(templates.FS, path)
			if err != nil {
				return err
			}
			addText(templateText(string(b)))
			return nil
		})
		// The catalogues' messages, not their keys; a placeholder is what a
		// notice fills in, not its own words.
		for _, lang := range languages {
			for _, m := range catalog.Get(lang).Texts() {
				addText(placeholderRE.ReplaceAllString(m, "\n"))
			}
		}
	})
	return builtinWords, builtinUnits
}

var placeholderRE = regexp.MustCompile(`\{[a-z_]+\}`)

// templateText is the literal text of a template file: each action
// ({{...}}) and HTML tag becomes a line break, since what it writes is not
// the template's own words.
func templateText(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		b.WriteByte('\n')
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			break
		}
		s = s[i+j+2:]
	}
	return html.UnescapeString(visibleText(b.String()))
}

// unit is a piece of text where an identifier may stand alone; token marks
// a piece joined by punctuation.
type unit struct {
	text  string
	token bool
}

// unitDelims split a line into the pieces where identifiers stand alone:
// list separators, labels ("Tenant: x"), brackets, quotes, table cells.
const unitDelims = ",;:|()[]{}<>\"«»“”„\t"

// units returns the whole pieces of a text where an identifier appears on
// its own: each line, each piece of a line between delimiters, and each
// token joined by punctuation ("t-2026", an email address). A generic
// identifier is a hit only when it is one of these, exactly.
func units(s string) []unit {
	var out []unit
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		out = append(out, unit{text: line})
		if strings.ContainsAny(line, unitDelims) {
			for _, p := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(unitDelims, r) }) {
				if p = strings.TrimSpace(p); p != "" && p != line {
					out = append(out, unit{text: p})
				}
			}
		}
		for _, tok := range strings.Fields(line) {
			tok = strings.TrimFunc(tok, func(r rune) bool { return !isWordRune(r) })
			if joined(tok) {
				out = append(out, unit{text: tok, token: true})
			}
		}
	}
	return out
}

// joined reports whether a token holds punctuation between its letters or
// digits, the shape of an identifier rather than of a word.
func joined(tok string) bool {
	for _, r := range tok {
		if !isWordRune(r) {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// providerVocabulary adds what the provider writes about itself in every
// notice: its name and addresses, the incident's id and title.
func providerVocabulary(provider []string) vocabulary {
	base, _ := builtin()
	v := make(vocabulary, len(base)+32)
	for w := range base {
		v[w] = struct{}{}
	}
	for _, s := range provider {
		v.add(s)
	}
	return v
}
