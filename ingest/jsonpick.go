package ingest

import (
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A pickTree says which parts of a JSON object a mapping reads: the names
// its paths walk through, and where a value is needed whole (a path ends
// there, or goes on with [N], [] or [KEY]). A real engine line is some
// sixty keys of which a layout reads a dozen: decoding every one into maps
// was most of a fleet's ingest CPU. The picker validates the whole line as
// encoding/json does, but builds only the picked values; anything it does
// not take exactly as encoding/json would (a syntax error, deep nesting,
// invalid UTF-8) makes it give up, and the full decode, with its error
// message, runs instead, so a line loads or is rejected exactly as before.
type pickTree struct {
	whole bool
	name  string               // the key this node is under (shared, not allocated per record)
	kids  map[string]*pickTree // by key
	list  []*pickTree          // kids, for a lookup without hashing (a node has a few)
}

// wholeValue is a node whose value is kept whole.
var wholeValue = &pickTree{whole: true}

// add marks the path's parts as read.
func (t *pickTree) add(p path) {
	n := t
	for _, st := range p {
		if n.whole {
			return
		}
		if st.kind != stepField {
			n.whole, n.kids, n.list = true, nil, nil
			return
		}
		if n.kids == nil {
			n.kids = map[string]*pickTree{}
		}
		k := n.kids[st.name]
		if k == nil {
			k = &pickTree{name: st.name}
			n.kids[st.name] = k
			n.list = append(n.list, k)
		}
		n = k
	}
	n.whole, n.kids, n.list = true, nil, nil
}

// kid is the node under key b, nil if none.
func (t *pickTree) kid(b []byte) *pickTree {
	for _, k := range t.list {
		if k.name == string(b) {
			return k
		}
	}
	return nil
}

// addName marks one key of the object as needed whole.
func (t *pickTree) addName(name string) {
	if !t.whole {
		t.add(path{{kind: stepField, name: name}})
	}
}

// addLookup marks what lookupPath reads for p: the path, and a column
// named with its dots ("meta.account") that is tried first.
func (t *pickTree) addLookup(p path) {
	t.add(p)
	if len(p) > 1 && p.plain() {
		name := ""
		for i, st := range p {
			if i > 0 {
				name += "."
			}
			name += st.name
		}
		t.addName(name)
	}
}

// pickLine decodes a JSON Lines line into an object holding the parts t
// names, as parseJSONObject would decode them (numbers json.Number, the
// first of a repeated top-level key, the last of a repeated nested one).
// ok is false when the picker gives up: the caller decodes it in full.
func pickLine(line []byte, t *pickTree) (map[string]any, bool) {
	if t == nil || t.whole || !utf8.Valid(line) {
		return nil, false
	}
	p := picker{b: line}
	p.ws()
	if p.peek() != '{' {
		return nil, false
	}
	obj, ok := p.object(t, true)
	if !ok {
		return nil, false
	}
	p.ws()
	return obj, p.i == len(p.b)
}

// pickString decodes the JSON a string holds (a CSV cell), as jsonIn
// would, keeping the parts t names; ok is false when the picker gives up.
func pickString(s string, t *pickTree) (any, bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	p := picker{b: []byte(s)}
	p.ws()
	v, ok := p.value(t)
	if !ok {
		return nil, false
	}
	p.ws()
	return v, p.i == len(p.b)
}

type picker struct {
	b     []byte
	i     int
	depth int
}

func (p *picker) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *picker) ws() {
	for p.i < len(p.b) && p.b[p.i] <= ' ' { // one test for the usual line, which has none
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value decodes the value at p.i: objects under a node with names are
// picked, anything else is decoded whole.
func (p *picker) value(t *pickTree) (any, bool) {
	switch c := p.peek(); {
	case c == '{':
		return p.object(t, false)
	case c == '[':
		return p.array()
	case c == '"':
		s, e, esc, ok := p.str()
		if !ok {
			return nil, false
		}
		if !esc {
			return string(p.b[s:e]), true
		}
		return unquoteJSON(p.b[s:e])
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		s := p.i
		if !p.number() {
			return nil, false
		}
		return json.Number(p.b[s:p.i]), true
	}
	return nil, false
}

// object decodes the object at p.i, keeping the keys t names (every key
// when t is whole).
func (p *picker) object(t *pickTree, firstWins bool) (map[string]any, bool) {
	p.i++
	if p.depth++; p.depth > maxJSONDepth {
		return nil, false
	}
	obj := make(map[string]any, len(t.list))
	p.ws()
	if p.peek() == '}' {
		p.i++
		p.depth--
		return obj, true
	}
	for {
		if p.peek() != '"' {
			return nil, false
		}
		s, e, esc, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if p.peek() != ':' {
			return nil, false
		}
		p.i++
		p.ws()
		var kid *pickTree
		var name string
		switch {
		case esc:
			k, ok := unquoteJSON(p.b[s:e])
			if !ok {
				return nil, false
			}
			name = k.(string)
			if t.whole {
				kid = wholeValue
			} else {
				kid = t.kids[name]
			}
		case t.whole:
			kid, name = wholeValue, string(p.b[s:e])
		default:
			if kid = t.kid(p.b[s:e]); kid != nil {
				name = kid.name
			}
		}
		if kid == nil {
			if !p.skip() {
				return nil, false
			}
		} else {
			v, ok := p.value(kid)
			if !ok {
				return nil, false
			}
			if _, seen := obj[name]; !firstWins || !seen {
				obj[name] = v
			}
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			p.depth--
			return obj, true
		default:
			return nil, false
		}
	}
}

// array decodes the array at p.i whole.
func (p *picker) array() ([]any, bool) {
	p.i++
	if p.depth++; p.depth > maxJSONDepth {
		return nil, false
	}
	out := make([]any, 0)
	p.ws()
	if p.peek() == ']' {
		p.i++
		p.depth--
		return out, true
	}
	for {
		v, ok := p.value(wholeValue)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			p.depth--
			return out, true
		default:
			return nil, false
		}
	}
}

// skip checks the value at p.i and steps over it, keeping nothing.
func (p *picker) skip() bool {
	switch c := p.peek(); {
	case c == '{', c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		if p.depth++; p.depth > maxJSONDepth {
			return false
		}
		p.ws()
		if p.peek() == end {
			p.i++
			p.depth--
			return true
		}
		for {
			if c == '{' {
				if p.peek() != '"' {
					return false
				}
				if _, _, _, ok := p.str(); !ok {
					return false
				}
				p.ws()
				if p.peek() != ':' {
					return false
				}
				p.i++
				p.ws()
			}
			if !p.skip() {
				return false
			}
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
				p.ws()
			case end:
				p.i++
				p.depth--
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, _, _, ok := p.str()
		return ok
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return false
}

// str steps over the string at p.i; s and e bound its content, esc says
// whether it holds escapes.
func (p *picker) str() (s, e int, esc, ok bool) {
	p.i++
	s = p.i
	b := p.b
	for i := p.i; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return s, i, esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return 0, 0, false, false
			}
			i++
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, 0, false, false
					}
				}
				i += 4
			default:
				return 0, 0, false, false
			}
		case c < 0x20:
			return 0, 0, false, false
		}
	}
	return 0, 0, false, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (p *picker) lit(w string) bool {
	if len(p.b)-p.i < len(w) || string(p.b[p.i:p.i+len(w)]) != w {
		return false
	}
	p.i += len(w)
	return true
}

// number steps over a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *picker) number() bool {
	b := p.b
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	p.i = i
	return true
}

// unquoteJSON decodes a string's content (already checked by str) as
// encoding/json does: a lone or broken surrogate becomes U+FFFD.
func unquoteJSON(s []byte) (any, bool) {
	out := make([]byte, 0, len(s))
	for r := 0; r < len(s); {
		c := s[r]
		if c != '\\' {
			out = append(out, c)
			r++
			continue
		}
		r++
		switch s[r] {
		case '"', '\\', '/':
			out = append(out, s[r])
			r++
		case 'b':
			out = append(out, '\b')
			r++
		case 'f':
			out = append(out, '\f')
			r++
		case 'n':
			out = append(out, '\n')
			r++
		case 'r':
			out = append(out, '\r')
			r++
		case 't':
			out = append(out, '\t')
			r++
		case 'u':
			rr := hex4(s[r+1 : r+5])
			r += 5
			if utf16.IsSurrogate(rr) {
				if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' && validHex4(s[r+2:r+6]) {
					if dec := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); dec != unicode.ReplacementChar {
						out = utf8.AppendRune(out, dec)
						r += 6
						continue
					}
				}
				rr = unicode.ReplacementChar
			}
			out = utf8.AppendRune(out, rr)
		default:
			return nil, false
		}
	}
	return string(out), true
}

func validHex4(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// pickCell is a CSV cell as a record holds it: a cell a path walks into
// (JSON text, as psql writes a JSON column) decoded once, keeping only
// what the paths read, as walk would find it; else the cell's text.
func (m *Mapping) pickCell(column, cell string) any {
	if m.pick == nil || m.pick.whole {
		return cell
	}
	t := m.pick.kids[column]
	if t == nil || t.whole || !looksJSON(cell) {
		return cell
	}
	if v, ok := pickString(cell, t); ok {
		return v
	}
	return cell
}
