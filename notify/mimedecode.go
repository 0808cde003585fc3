package notify

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
	"golang.org/x/text/transform"
)

// decodeMessage splits a message into its decoded headers and leaf parts
// (the checker normalises them, line by line). What cannot be decoded (an
// unknown charset or transfer encoding) is an error, so the check fails
// closed.
func decodeMessage(data []byte) ([]segment, error) {
	var segs []segment
	if err := decodeRFC822(&segs, "", data, 0); err != nil {
		return nil, err
	}
	return segs, nil
}

// decodeRFC822 decodes one message: the top one, or one attached to it
// (message/rfc822), whose segments are labelled with prefix.
func decodeRFC822(segs *[]segment, prefix string, data []byte, depth int) error {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return err
	}
	hb, err := headerText(msg.Header)
	if err != nil {
		return err
	}
	*segs = append(*segs, segment{prefix + "headers", hb, segHeaders})
	return decodePart(segs, prefix, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body, depth)
}

var wordDecoder = &mime.WordDecoder{CharsetReader: func(charset string, input io.Reader) (io.Reader, error) {
	t, err := charsetTransformer(charset)
	if err != nil {
		return nil, err
	}
	return transform.NewReader(input, t), nil
}}

// headerText writes every header, encoded words decoded, one per line in
// key order.
func headerText(h map[string][]string) (string, error) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var hb strings.Builder
	for _, k := range keys {
		for _, v := range h[k] {
			d, err := wordDecoder.DecodeHeader(v)
			if err != nil {
				return "", fmt.Errorf("header %s: %w", k, err)
			}
			hb.WriteString(k + ": " + d + "\n")
		}
	}
	return hb.String(), nil
}

func decodePart(segs *[]segment, prefix, ctype, cte, disposition string, body io.Reader, depth int) error {
	if depth > 8 {
		return fmt.Errorf("MIME nesting too deep")
	}
	if ctype == "" {
		ctype = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("content-type %q: %w", ctype, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			// A part's own headers (names, descriptions) are read too.
			ph, err := headerText(p.Header)
			if err != nil {
				return err
			}
			*segs = append(*segs, segment{prefix + "part headers", ph, segHeaders})
			if err := decodePart(segs, prefix, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1); err != nil {
				return err
			}
		}
	}
	var r io.Reader = body
	switch enc := strings.ToLower(strings.TrimSpace(cte)); enc {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &spaceStripper{r: body})
	case "", "7bit", "8bit", "binary":
	default:
		return fmt.Errorf("%s part: unknown transfer encoding %q", mt, cte)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s part: %w", mt, err)
	}
	if mt == "message/rfc822" || mt == "message/global" {
		return decodeRFC822(segs, prefix+"attached message ", b, depth+1)
	}
	return leafSegments(segs, nil, prefix, mt, params, disposition, string(b))
}

// leafSegments adds the segments of one decoded leaf part (its bytes b, of media
// type mt): its text (an HTML part's visible text and the inside of its
// tags), and an attachment's name. scratch (nil: none) lends the memory of
// an HTML part's text and markup before their entities are read: the
// segments may then be the scratch's memory, and hold until its next use
// (one scratch per part).
func leafSegments(segs *[]segment, scratch *htmlScratch, prefix, mt string, params map[string]string, disposition string, b string) error {
	label := prefix + mt + " part"
	kind := segProse
	if disposition != "" {
		if _, dp, err := mime.ParseMediaType(disposition); err == nil && dp["filename"] != "" {
			label, kind = prefix+"attachment "+dp["filename"], segAttachment
		}
	}
	texts, err := decodeCharset(b, params["charset"])
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	for ti, text := range texts {
		if mt == "text/html" || mt == "application/xhtml+xml" {
			// The visible text, and the inside of the tags, whose
			// attributes (href, alt, title) could carry an identifier.
			// (The scratch holds one text's: the first.)
			if scratch == nil || ti > 0 {
				*segs = append(*segs, segment{label + " (markup)", html.UnescapeString(tagInteriors(text)), segProse})
				text = html.UnescapeString(visibleText(text))
			} else {
				scratch.markup = appendTagInteriors(scratch.markup[:0], text)
				scratch.visible = appendVisibleText(scratch.visible[:0], text)
				var markup string
				markup, scratch.markupText = unescapeInto(scratch.markupText, scratch.markup)
				*segs = append(*segs, segment{label + " (markup)", markup, segProse})
				text, scratch.visibleText = unescapeInto(scratch.visibleText, scratch.visible)
			}
		}
		*segs = append(*segs, segment{label, text, kind})
	}
	// Names of attachments are words of the message too.
	if kind == segAttachment {
		*segs = append(*segs, segment{label + " (name)", label, segHeaders})
	}
	return nil
}

// decodeCharset turns a part's bytes into text by its declared charset.
// Bytes that hold NULs whatever their label are read as UTF-16 too, both
// ways: a reader's mail program may well show them so. The bytes come as a
// string: UTF-8 and ASCII (the usual case) are then the text itself, not a
// copy.
func decodeCharset(b string, charset string) ([]string, error) {
	t, err := charsetTransformer(charset)
	if err != nil {
		return nil, err
	}
	text := b
	if t != nil {
		if text, _, err = transform.String(t, text); err != nil {
			return nil, fmt.Errorf("charset %s: %w", charset, err)
		}
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, " ")
	}
	out := []string{text}
	if strings.IndexByte(b, 0) >= 0 {
		for _, e := range []encoding.Encoding{unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)} {
			if s, _, err := transform.String(unicode.BOMOverride(e.NewDecoder()), b); err == nil {
				out = append(out, strings.ToValidUTF8(s, " "))
			}
		}
	}
	return out, nil
}

// charsetTransformer returns the decoder of a MIME charset, nil for UTF-8
// and ASCII, an error for a charset leakmap cannot read.
func charsetTransformer(charset string) (transform.Transformer, error) {
	name := strings.ToLower(strings.TrimSpace(charset))
	switch name {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return nil, nil
	case "utf-16": // RFC 2781: big-endian unless a BOM says otherwise
		return unicode.BOMOverride(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder()), nil
	case "utf-16le":
		return unicode.BOMOverride(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder()), nil
	case "utf-16be":
		return unicode.BOMOverride(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder()), nil
	case "utf-32", "utf-32be":
		return utf32.UTF32(utf32.BigEndian, utf32.UseBOM).NewDecoder(), nil
	case "utf-32le":
		return utf32.UTF32(utf32.LittleEndian, utf32.UseBOM).NewDecoder(), nil
	}
	if e, err := htmlindex.Get(name); err == nil {
		return e.NewDecoder(), nil
	}
	if e, err := ianaindex.MIME.Encoding(name); err == nil && e != nil {
		return e.NewDecoder(), nil
	}
	return nil, fmt.Errorf("unknown charset %q", charset)
}

// visibleText is the text a browser shows: comments and tags removed, a
// block-level tag (paragraph, list item, table cell, line break) read as a
// line break and any other tag as nothing, so a tag cannot split an
// identifier into pieces the check would miss ("t<b>-</b>delta" reads
// "t-delta", "al<span></span>pha" reads "alpha"). Entities are left to the
// caller, so that "&lt;b&gt;" never becomes a tag.
func visibleText(s string) string {
	return string(appendVisibleText(make([]byte, 0, len(s)), s))
}

// appendVisibleText appends visibleText(s).
func appendVisibleText(b []byte, s string) []byte {
	b = slices.Grow(b, len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		s = s[i:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s[4:], "-->")
			if end < 0 {
				return b
			}
			s = s[4+end+3:]
			continue
		}
		j := strings.IndexByte(s, '>')
		if j < 0 {
			return b
		}
		if blockTags[tagName(s[1:j])] {
			b = append(b, '\n')
		}
		s = s[j+1:]
	}
}

// tagName is the lowercase element name of a tag's inside ("/td", "br/").
func tagName(inside string) string {
	inside = strings.TrimLeft(inside, "/! ")
	end := strings.IndexFunc(inside, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') })
	if end >= 0 {
		inside = inside[:end]
	}
	return strings.ToLower(inside)
}

var blockTags = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`address article aside blockquote body br caption dd details div dl dt
		fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hr html li main nav ol p pre
		section summary table tbody td tfoot th thead title tr ul doctype meta`) {
		blockTags[t] = true
	}
}

// tagInteriors returns the inside of every HTML tag, one per line.
func tagInteriors(s string) string {
	return string(appendTagInteriors(make([]byte, 0, len(s)/2), s))
}

// appendTagInteriors appends tagInteriors(s).
func appendTagInteriors(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			return b
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			return append(b, s[i+1:]...)
		}
		b = append(append(b, s[i+1:i+j]...), '\n')
		s = s[i+j+1:]
	}
}

// htmlScratch is the memory leafSegments reuses for an HTML part: its
// markup and visible text, and both with their entities read.
type htmlScratch struct{ markup, visible, markupText, visibleText []byte }

// unescapeInto gives html.UnescapeString(b), in dst's memory where b holds
// only the entities an HTML writer escapes with (appendUnescaped), else
// as html gives it; and dst to keep for the next use.
func unescapeInto(dst, b []byte) (string, []byte) {
	if bytes.IndexByte(b, '&') < 0 {
		return unsafeString(b), dst
	}
	if out, ok := appendUnescaped(dst[:0], b); ok {
		return unsafeString(out), out
	}
	return html.UnescapeString(string(b)), dst
}

// htmlRefs are the character references HTML writers escape with; a
// character's first is the one html.EscapeString writes.
var htmlRefs = [...]struct {
	c   byte
	ref string
}{{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'\'', "&#39;"}, {'"', "&#34;"}, {'"', "&quot;"}}

// appendUnescaped appends html.UnescapeString(b) when every '&' of b starts
// one of htmlRefs; ok is false for anything else, which is left to
// html.UnescapeString (named entities, other numbers, a bare '&').
func appendUnescaped(dst, b []byte) ([]byte, bool) {
next:
	for {
		i := bytes.IndexByte(b, '&')
		if i < 0 {
			return append(dst, b...), true
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		for _, r := range htmlRefs {
			if bytes.HasPrefix(b, []byte(r.ref)) {
				dst = append(dst, r.c)
				b = b[len(r.ref):]
				continue next
			}
		}
		return dst, false
	}
}

// spaceStripper drops whitespace so base64 lines decode as one stream.
type spaceStripper struct{ r io.Reader }

func (n *spaceStripper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}
