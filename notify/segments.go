package notify

import (
	"bytes"
	"mime"
	"net/mail"
	"net/textproto"
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
func builtSegments(eml []byte, s *emlSpec) ([]segment, bool) {
	msg, err := mail.ReadMessage(bytes.NewReader(eml))
	if err != nil {
		return nil, false
	}
	hb, err := headerText(msg.Header)
	if err != nil {
		return nil, false
	}
	segs := make([]segment, 0, 10)
	segs = append(segs, segment{"headers", hb, segHeaders})
	_, altB := emlBoundaries(s.MessageID)
	leaf := func(h textproto.MIMEHeader, b []byte) bool {
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
		if b == nil {
			return true // a multipart's own part: its parts follow
		}
		mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
		if err != nil {
			return false
		}
		return leafSegments(&segs, "", mt, params, h.Get("Content-Disposition"), b) == nil
	}
	if !leaf(altPartHeader(altB), nil) {
		return nil, false
	}
	for i, body := range []string{s.Text, s.HTML} {
		if !leaf(bodyPartHeader(bodyPartTypes[i]), qpRoundTrip(body)) {
			return nil, false
		}
	}
	if a := s.Attachment; a != nil {
		data := a.Data
		if data == nil {
			data = []byte{}
		}
		if !leaf(attachmentPartHeader(a), data) {
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
// writer (text mode) wrote of s: the same bytes, each line break (\r\n, \r
// or \n) as \r\n.
func qpRoundTrip(s string) []byte {
	out := make([]byte, 0, len(s)+len(s)/16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			out = append(out, '\r', '\n')
		case '\n':
			out = append(out, '\r', '\n')
		default:
			out = append(out, c)
		}
	}
	return out
}
