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
	"sort"
	"strings"
	"unicode/utf8"
)

// decodeMessage splits a message into its decoded headers and leaf parts.
func decodeMessage(data []byte) ([]segment, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	dec := &mime.WordDecoder{}
	keys := make([]string, 0, len(msg.Header))
	for k := range msg.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var hb strings.Builder
	for _, k := range keys {
		for _, v := range msg.Header[k] {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
			hb.WriteString(k + ": " + v + "\n")
		}
	}
	segs := []segment{{"headers", hb.String(), segHeaders}}
	err = decodePart(&segs, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body, 0)
	return segs, err
}

func decodePart(segs *[]segment, ctype, cte, disposition string, body io.Reader, depth int) error {
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
			if err := decodePart(segs, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1); err != nil {
				return err
			}
		}
	}
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &newlineStripper{r: body})
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s part: %w", mt, err)
	}
	label := mt + " part"
	if disposition != "" {
		if _, dp, err := mime.ParseMediaType(disposition); err == nil && dp["filename"] != "" {
			label = "attachment " + dp["filename"]
		}
	}
	text := string(b)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, " ")
	}
	if mt == "text/html" {
		// The visible text (tags as spaces), and the inside of the tags,
		// whose attributes (href, alt, title) could carry an identifier.
		*segs = append(*segs, segment{label + " (markup)", html.UnescapeString(tagInteriors(text)), segProse})
		text = html.UnescapeString(visibleText(text))
	}
	kind := segProse
	if label != mt+" part" {
		kind = segAttachment
	}
	*segs = append(*segs, segment{label, text, kind})
	// Names of attachments are words of the message too.
	if label != mt+" part" {
		*segs = append(*segs, segment{label + " (name)", label, segHeaders})
	}
	return nil
}

// visibleText is the text a browser shows: comments and tags removed, a
// block-level tag (paragraph, list item, table cell, line break) read as a
// line break and any other tag as nothing, so a tag cannot split an
// identifier into pieces the check would miss ("t<b>-</b>delta" reads
// "t-delta", "al<span></span>pha" reads "alpha"). Entities are left to the
// caller, so that "&lt;b&gt;" never becomes a tag.
func visibleText(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s[4:], "-->")
			if end < 0 {
				return b.String()
			}
			s = s[4+end+3:]
			continue
		}
		j := strings.IndexByte(s, '>')
		if j < 0 {
			return b.String()
		}
		if blockTags[tagName(s[1:j])] {
			b.WriteByte('\n')
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
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			return b.String()
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s[i+1:])
			return b.String()
		}
		b.WriteString(s[i+1 : i+j])
		b.WriteByte('\n')
		s = s[i+j+1:]
	}
}

// newlineStripper drops CR and LF so base64 lines decode as one stream.
type newlineStripper struct{ r io.Reader }

func (n *newlineStripper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}
