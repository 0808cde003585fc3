package notify

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"mime"
	"net/textproto"
	"slices"
	"strings"
)

// builtSegments returns the segments decodeMessage reads from eml, decoded
// from eml's own bytes by a reader of the narrow form buildEML writes
// (CRLF lines of printable ASCII headers, a multipart/mixed holding a
// multipart/alternative and leaves in quoted-printable or base64), without
// decodeMessage's readers and maps. It reads what is in the file, never
// what the renderer meant to write. ok is false for anything outside that
// form (a bare CR or LF, a byte outside printable ASCII in a header, a
// boundary string inside a part, an escape Go's reader would take another
// way, another transfer encoding, ...): the caller then decodes eml with
// decodeMessage, so the check is the same either way.
// TestBuiltSegmentsMatchDecoding (hostile bodies, every mutation of a
// notice's bytes it makes), and every draft under test
// (checkBuiltAgainstDecoded), hold the two equal.
//
// scratch (nil: none) lends memory reused from notice to notice: the
// segments' slice and the decoding buffers. The texts of the leaves kept as
// decoded (a UTF-8 text part, the attachment) are read from the scratch's
// memory: the segments hold until the next call only. The draft's check
// keeps nothing of a segment's text (its line caches clone what they keep).
func builtSegments(eml []byte, scratch *builtScratch) ([]segment, bool) {
	if scratch == nil {
		scratch = &builtScratch{}
	}
	segs := scratch.segs[:0]
	defer func() {
		scratch.segs = segs[:0]
		// The fields' values are eml's memory: not kept past the call
		// (a large tenant's message is 150 MB at 100M requests).
		for i := range scratch.fields {
			clear(scratch.fields[i][:cap(scratch.fields[i])])
		}
	}()
	scratch.leaves = 0
	scratch.texts = scratch.texts[:0]
	h, body, ok := scratch.readHeader(eml, 0)
	if !ok {
		return nil, false
	}
	hb, ok := scratch.headerText(h)
	if !ok {
		return nil, false
	}
	segs = append(segs, segment{"headers", hb, segHeaders})
	if !scratch.part(&segs, h, body, 0) {
		return nil, false
	}
	return segs, true
}

// builtScratch is the memory builtSegments reuses.
type builtScratch struct {
	segs   []segment
	text   []byte        // a folded field's value as it is read
	texts  []byte        // the message's header texts, one after the other
	fields [][]hdrField  // each depth's header fields
	leaf   [][]byte      // each leaf's decoded bytes
	leaves int           // leaves decoded in this message
	html   []htmlScratch // each leaf's, if HTML
}

// shed lets go of the buffers larger than scratchKeep.
func (s *builtScratch) shed() {
	for i := range s.leaf {
		if cap(s.leaf[i]) > scratchKeep {
			s.leaf[i] = nil
		}
		if h := &s.html[i]; cap(h.markup)+cap(h.visible)+cap(h.markupText)+cap(h.visibleText) > scratchKeep {
			*h = htmlScratch{}
		}
	}
	if cap(s.text) > scratchKeep {
		s.text = nil
	}
	if cap(s.texts) > scratchKeep {
		s.texts = nil
	}
}

// leafBuffer is the memory of the next leaf's decoded bytes.
func (s *builtScratch) leafBuffer() *[]byte {
	if s.leaves == len(s.leaf) {
		s.leaf = append(s.leaf, nil)
		s.html = append(s.html, htmlScratch{})
	}
	s.leaves++
	return &s.leaf[s.leaves-1]
}

// hdrField is one header field as Go's readers give it: the canonical key
// and the value, continuation lines joined by a space.
type hdrField struct{ key, value string }

// readHeader reads the header fields before the first empty line of data
// as net/mail's and net/textproto's readers do, for lines of printable
// ASCII ending in CRLF whose field names are letters, digits and '-'
// (starting with a letter) and whose continuation lines start with a
// space. The fields are returned in the order read, in the scratch's
// memory for depth (a part's fields are used while its own parts, one
// level down, are read).
func (s *builtScratch) readHeader(data []byte, depth int) (fields []hdrField, body []byte, ok bool) {
	end := bytes.Index(data, []byte("\r\n\r\n"))
	if end < 0 || end > 1<<16 {
		return nil, nil, false
	}
	block := data[:end+2] // every line with its CRLF
	body = data[end+4:]
	if bytes.HasPrefix(data, []byte("\r\n")) {
		return nil, nil, false // no header at all: left to the readers
	}
	for len(s.fields) <= depth {
		s.fields = append(s.fields, make([]hdrField, 0, 16))
	}
	fields = s.fields[depth][:0]
	defer func() { s.fields[depth] = fields[:0] }()
	for i := 0; i < len(block); i++ {
		c := block[i]
		if c == '\r' {
			if block[i+1] != '\n' {
				return nil, nil, false
			}
			i++
		} else if c < 0x20 || c > 0x7e {
			return nil, nil, false
		}
	}
	// The field being read: its lines trimmed, joined by a space. A field
	// of one line is read where it is (folded: false), and its value is
	// data's own memory, not a copy: a message's fields are used only
	// while its segments are made, and data outlives that.
	var kv []byte
	folded := false
	flush := func() {
		if kv != nil {
			k, v, _ := bytes.Cut(kv, []byte(":"))
			v = bytes.TrimLeft(v, " \t")
			value := unsafeString(v)
			if folded {
				value = string(v)
			}
			fields = append(fields, hdrField{canonicalKey(k), value})
		}
	}
	for rest := block; len(rest) > 0; {
		i := bytes.Index(rest, []byte("\r\n"))
		line := rest[:i]
		rest = rest[i+2:]
		if line[0] == ' ' {
			if kv == nil {
				return nil, nil, false // a first line that starts with a space: malformed
			}
			if !folded {
				kv, folded = append(s.text[:0], kv...), true
			}
			kv = append(append(kv, ' '), bytes.Trim(line, " \t")...)
			s.text = kv
			continue
		}
		flush()
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isFieldName(line[:colon]) {
			return nil, nil, false
		}
		kv, folded = bytes.Trim(line, " \t"), false
	}
	flush()
	return fields, body, true
}

// headerKeys are the field names the notices write, as written and
// canonical, to their canonical form: a key read so is not copied.
var headerKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Date", "From", "To", "Cc", "Reply-To", "Subject", "Message-ID", "In-Reply-To", "References",
		"Supersedes", "Content-Language", "MIME-Version", "Content-Type", "Content-Transfer-Encoding", "Content-Disposition"} {
		m[k] = textproto.CanonicalMIMEHeaderKey(k)
		m[m[k]] = m[k]
	}
	return m
}()

// canonicalKey is textproto.CanonicalMIMEHeaderKey(string(k)).
func canonicalKey(k []byte) string {
	if c, ok := headerKeys[string(k)]; ok {
		return c
	}
	return textproto.CanonicalMIMEHeaderKey(string(k))
}

func isFieldName(b []byte) bool {
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return false
		}
	}
	return true
}

// get is the first value of key (textproto.MIMEHeader.Get), "" if none.
func get(fields []hdrField, key string) string {
	for _, f := range fields {
		if f.key == key {
			return f.value
		}
	}
	return ""
}

// headerText is mimedecode's headerText of fields: every field, encoded
// words decoded, one per line, in key order (a key's values in the order
// read). The text is in the scratch's memory (s.texts), which holds the
// message's header texts one after the other until the next message: a
// text moved by a growth of s.texts stays where it was, alive while used.
func (s *builtScratch) headerText(fields []hdrField) (string, bool) {
	slices.SortStableFunc(fields, func(a, b hdrField) int { return strings.Compare(a.key, b.key) })
	b := s.texts
	start := len(b)
	for _, f := range fields {
		d, err := wordDecoder.DecodeHeader(f.value)
		if err != nil {
			return "", false
		}
		b = append(append(append(append(b, f.key...), ": "...), d...), '\n')
	}
	s.texts = b
	return unsafeString(b[start:]), true
}

// part adds the segments of one MIME entity, h its header fields and body
// its bytes, as decodePart does; the fields are sorted already.
func (s *builtScratch) part(segs *[]segment, h []hdrField, body []byte, depth int) bool {
	if depth > 2 {
		return false
	}
	ctype := get(h, "Content-Type")
	if ctype == "" {
		return false
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return false
	}
	if strings.HasPrefix(mt, "multipart/") {
		parts, ok := splitMultipart(body, params["boundary"])
		if !ok {
			return false
		}
		for _, p := range parts {
			ph, pb, ok := s.readHeader(p, depth+1)
			if !ok {
				return false
			}
			text, ok := s.headerText(ph)
			if !ok {
				return false
			}
			*segs = append(*segs, segment{"part headers", text, segHeaders})
			if !s.part(segs, ph, pb, depth+1) {
				return false
			}
		}
		return true
	}
	var decoded string
	switch get(h, "Content-Transfer-Encoding") {
	case "quoted-printable":
		buf := s.leafBuffer()
		b, ok := appendQPDecoded((*buf)[:0], body)
		*buf = b
		if !ok {
			return false
		}
		decoded = unsafeString(b)
	case "base64":
		// '=' only as the padding at the end: one decode of the whole is
		// then what the streaming decoder gives. The decoder skips the
		// line ends itself: no copy of the body without them (150 MB for
		// a large tenant's attachment at 100M requests).
		if i := bytes.IndexByte(body, '='); i >= 0 {
			pad := 0
			for _, c := range body[i:] {
				switch c {
				case '=':
					pad++
				case '\r', '\n':
				default:
					return false
				}
			}
			if pad > 2 {
				return false
			}
		}
		buf := s.leafBuffer()
		b := slices.Grow((*buf)[:0], base64.StdEncoding.DecodedLen(len(body)))
		n, err := base64.StdEncoding.Decode(b[:cap(b)], body)
		*buf = b[:n]
		if err != nil {
			return false
		}
		decoded = unsafeString(b[:n])
	default:
		return false
	}
	if mt == "message/rfc822" || mt == "message/global" {
		return false
	}
	return leafSegments(segs, &s.html[s.leaves-1], "", mt, params, get(h, "Content-Disposition"), decoded) == nil
}

// splitMultipart returns the parts of a multipart body as Go's multipart
// reader finds them, for the form multipart.Writer writes: "--B\r\n" first,
// "\r\n--B\r\n" between parts, "\r\n--B--" at the end followed by nothing
// or one CRLF, and "--B" nowhere else (so no part can end elsewhere for a
// reader). The parts alias body.
func splitMultipart(body []byte, boundary string) ([][]byte, bool) {
	if boundary == "" || strings.ContainsAny(boundary, "\r\n") {
		return nil, false
	}
	dash := "--" + boundary
	if !bytes.HasPrefix(body, []byte(dash+"\r\n")) {
		return nil, false
	}
	var parts [][]byte
	rest := body[len(dash)+2:]
	for {
		i := bytes.Index(rest, []byte(dash))
		if i < 2 || rest[i-2] != '\r' || rest[i-1] != '\n' {
			return nil, false
		}
		parts = append(parts, rest[:i-2])
		after := rest[i+len(dash):]
		switch {
		case bytes.HasPrefix(after, []byte("\r\n")):
			rest = after[2:]
		case bytes.HasPrefix(after, []byte("--")):
			if tail := after[2:]; len(tail) != 0 && string(tail) != "\r\n" {
				return nil, false
			}
			return parts, true
		default:
			return nil, false
		}
	}
}

// appendQPDecoded appends what Go's quotedprintable reader gives back of
// b, for lines that end in CRLF (the last one may end in nothing), hold
// only printable ASCII, spaces and tabs, and whose every '=' starts an
// escape of two uppercase hex digits or ends the line (a soft break).
// Trailing blanks of a line are dropped, as the reader does.
func appendQPDecoded(dst, b []byte) ([]byte, bool) {
	for len(b) > 0 {
		line := b
		hard := false
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			if i == 0 || b[i-1] != '\r' {
				return dst, false
			}
			line, b, hard = b[:i-1], b[i+1:], true
		} else {
			b = nil
		}
		line = bytes.TrimRight(line, " \t")
		if n := len(line); n > 0 && line[n-1] == '=' {
			if !hard {
				return dst, false // a soft break at the very end: left to the reader
			}
			line, hard = line[:n-1], false
		}
		for i := 0; i < len(line); {
			// A run of bytes that stand for themselves is copied whole.
			j := i
			for j+8 <= len(line) && !qpSpecialWord(binary.LittleEndian.Uint64(line[j:])) {
				j += 8
			}
			for j < len(line) && qpLiteral[line[j]] {
				j++
			}
			dst = append(dst, line[i:j]...)
			if i = j; i == len(line) {
				break
			}
			if line[i] != '=' || i+2 >= len(line) || !isUpperHex(line[i+1]) || !isUpperHex(line[i+2]) {
				return dst, false
			}
			dst = append(dst, unhex(line[i+1])<<4|unhex(line[i+2]))
			i += 3
		}
		if hard {
			dst = append(dst, '\r', '\n')
		}
	}
	return dst, true
}

// qpLiteral: the bytes a quoted-printable line holds as themselves
// (spaces, tabs and printable ASCII but '=').
var qpLiteral = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = c != '='
	}
	t[' '], t['\t'] = true, true
	return t
}()

// qpSpecialWord says whether any of the eight bytes of x is not one
// qpLiteral holds (a byte below 0x20, tabs included, one above 0x7e, or
// '='): a run of literal bytes is skipped a word at a time, and the word
// that holds a special byte is read a byte at a time.
func qpSpecialWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - 0x20*ones) &^ x & highs
	above := ((x + ones) | x) & highs // 0x7f and up; a carry comes only from 0xff, itself special
	eq := x ^ '='*ones
	equals := (eq - ones) &^ eq & highs
	return below|above|equals != 0
}

func isUpperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}
