package notify

import (
	"bytes"
	"mime"
	"net/mail"
	"net/textproto"
	"strings"
)

// builtSegments returns the segments decodeMessage reads from eml, the
// message buildEML wrote for s, without decoding its bodies again: the
// draft checks every notice as it writes it and has its parts at hand. The
// headers are read from eml as decodeMessage reads them; each part's
// headers are the ones buildEML wrote, and its decoded bytes are what the
// transfer encodings give back (base64: the attachment's bytes;
// quoted-printable, as Go's writer and reader do it: every byte, with each
// line break, \r\n, \r or \n, read as \r\n). From there the same code
// (leafSegments) makes the segments, so the check is the same. ok is false
// when s holds a header value this does not cover (a control or non-ASCII
// byte in the attachment's name or type); the caller then decodes eml.
// TestBuiltSegmentsMatchDecoding, and every draft under test
// (checkBuiltAgainstDecoded), hold the two equal.
//
// scratch (nil: none) lends the segments' slice, reused from notice to
// notice: the segments' texts are strings of their own, so nothing refers
// to it once the segments are checked.
func builtSegments(eml []byte, s *emlSpec, scratch *builtScratch) ([]segment, bool) {
	if scratch == nil {
		scratch = &builtScratch{}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(eml))
	if err != nil {
		return nil, false
	}
	hb, err := headerText(msg.Header)
	if err != nil {
		return nil, false
	}
	segs := scratch.segs[:0]
	defer func() { scratch.segs = segs[:0] }()
	segs = append(segs, segment{"headers", hb, segHeaders})
	_, altB := emlBoundaries(s.MessageID)
	leaf := func(h textproto.MIMEHeader, b string, isLeaf bool) bool {
		for _, vs := range h {
			for _, v := range vs {
				if !plainHeaderValue(v) {
					return false
				}
			}
		}
		ph, err := headerText(h)
		if err != nil {
			return false
		}
		segs = append(segs, segment{"part headers", ph, segHeaders})
		if !isLeaf {
			return true // a multipart's own part: its parts follow
		}
		mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
		if err != nil {
			return false
		}
		return leafSegments(&segs, "", mt, params, h.Get("Content-Disposition"), b) == nil
	}
	if !leaf(altPartHeader(altB), "", false) {
		return nil, false
	}
	for i, body := range []string{s.Text, s.HTML} {
		if !leaf(bodyPartHeader(bodyPartTypes[i]), qpRoundTrip(body), true) {
			return nil, false
		}
	}
	if a := s.Attachment; a != nil {
		if !leaf(attachmentPartHeader(a), string(a.Data), true) {
			return nil, false
		}
	}
	return segs, true
}

// plainHeaderValue: printable ASCII, no space at either end, so the header
// line reads back as written.
func plainHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return v == "" || v[0] != ' ' && v[len(v)-1] != ' '
}

// qpRoundTrip is what Go's quotedprintable reader gives back of what its
// writer (text mode) wrote of s: the same bytes, each line break (\r\n,
// \r or \n) as \r\n. Written straight into the string the segment keeps.
func qpRoundTrip(s string) string {
	if strings.IndexAny(s, "\r\n") < 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s) + strings.Count(s, "\n") + 16)
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i])
		out.WriteString("\r\n")
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}

// builtScratch is the memory builtSegments reuses.
type builtScratch struct {
	segs []segment
}
