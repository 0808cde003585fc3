package notify

import (
	"html"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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

// span is a unit (units) as a byte range of its line.
type span struct {
	a, b  int
	token bool
}

// unitSpans appends the units of one line (no line break in it) to out as
// byte ranges, in the order units gives them, without allocating: the
// draft's check finds each unit's words among the line's own.
// TestUnitSpansMatchUnits holds the two equal.
func unitSpans(line string, out []span) []span {
	out, _ = appendUnitSpans(line, out, nil)
	return out
}

// appendUnitSpans is unitSpans in one pass over the line; toks is scratch
// space for the tokens, which come after the pieces.
func appendUnitSpans(line string, out, toks []span) ([]span, []span) {
	a, b := trimSpaces(line, 0, len(line))
	if a == b {
		return out, toks
	}
	out = append(out, span{a, b, false})
	toks = toks[:0]
	// pf, pl: the current piece's first and last non-space (a piece runs
	// between delimiters, strings.FieldsFunc, then strings.TrimSpace; the
	// whole line, when it has no delimiter, is no piece of its own); tf,
	// tl: the current token's first and last letter or digit (a token runs
	// between spaces, strings.Fields), joined when another character lies
	// between them.
	pf, pl, tf, tl, gap, joined := -1, -1, -1, -1, false, false
	for i := a; ; {
		k, n := uint8(cSpace|cDelim), 0
		if i < b {
			if c := line[i]; c < utf8.RuneSelf {
				k, n = asciiClass[c], 1
			} else {
				k, n = runeClass(line, i)
			}
		}
		if k&cDelim != 0 {
			if pf >= 0 && pl-pf != b-a {
				out = append(out, span{pf, pl, false})
			}
			pf = -1
		} else if k&cSpace == 0 {
			if pf < 0 {
				pf = i
			}
			pl = i + n
		}
		switch {
		case k&cSpace != 0:
			if joined {
				toks = append(toks, span{tf, tl, true})
			}
			tf, gap, joined = -1, false, false
		case k&cWord != 0:
			if tf < 0 {
				tf = i
			} else if gap {
				joined = true
			}
			gap, tl = false, i+n
		case tf >= 0:
			gap = true
		}
		if i >= b {
			break
		}
		i += n
	}
	return append(out, toks...), toks
}

// Character classes of the units' scan: unicode.IsSpace, a rune of
// unitDelims, isWordRune.
const (
	cSpace = 1 << iota
	cDelim
	cWord
)

var asciiClass [utf8.RuneSelf]uint8

func init() {
	for c := range asciiClass {
		asciiClass[c] = classOf(rune(c))
	}
}

func classOf(r rune) uint8 {
	var k uint8
	if unicode.IsSpace(r) {
		k |= cSpace
	}
	if strings.ContainsRune(unitDelims, r) {
		k |= cDelim
	}
	if isWordRune(r) {
		k |= cWord
	}
	return k
}

// runeClass is the class of the rune at s[i] and its size, as a range loop
// decodes it (an invalid byte is U+FFFD, of no class).
func runeClass(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return 0, 1
	}
	return classOf(r), n
}

// trimSpaces is s[a:b] with the spaces at both ends trimmed
// (strings.TrimSpace), as a range of s.
func trimSpaces(s string, a, b int) (int, int) {
	for a < b && s[a] < utf8.RuneSelf && asciiClass[s[a]]&cSpace != 0 {
		a++
	}
	for a < b && s[b-1] < utf8.RuneSelf {
		if asciiClass[s[b-1]]&cSpace == 0 {
			if k, _ := runeClass(s, a); k&cSpace == 0 {
				return a, b
			}
			break
		}
		b--
	}
	for a < b {
		k, n := runeClass(s, a)
		if k&cSpace == 0 {
			break
		}
		a += n
	}
	end := a
	for i := a; i < b; {
		k, n := runeClass(s, i)
		i += n
		if k&cSpace == 0 {
			end = i
		}
	}
	return a, end
}
