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
	segs := []segment{{"headers", hb.String()}}
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
		*segs = append(*segs, segment{label + " (markup)", html.UnescapeString(tagInteriors(text))})
		text = html.UnescapeString(stripTags(text))
	}
	*segs = append(*segs, segment{label, text})
	// Names of attachments are words of the message too.
	if label != mt+" part" {
		*segs = append(*segs, segment{label + " (name)", label})
	}
	return nil
}

// stripTags replaces each HTML tag by a space, so a tag cannot split an
// identifier into pieces the check would miss ("r<b>-</b>17" reads "r - 17").
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
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
