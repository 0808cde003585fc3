package notify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"time"
)

// emlSpec is one message to write.
type emlSpec struct {
	From       mail.Address
	To         []mail.Address
	ReplyTo    *mail.Address // where the notice asks to write; nil: none
	Subject    string
	MessageID  string   // with angle brackets, as in the header
	Supersedes string   // a correction: the Message-ID of the version it replaces
	References []string // every earlier version's Message-ID
	Date       time.Time
	Lang       string
	Text, HTML string
	Attachment *attachment
}

type attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// messageID derives a stable Message-ID from the incident and the notice's
// owner (a tenant id, or "regulator"): the same notice always carries the
// same id, so a resend after a crash can be recognised as a duplicate. The
// tenant id is hashed so that no identifier leaks into mail logs.
func messageID(incidentID, owner, domain string) string {
	h := sha256.Sum256([]byte("leakmap-notice\x00" + incidentID + "\x00" + owner))
	if domain == "" {
		domain = "leakmap.invalid"
	}
	return "notice." + hex.EncodeToString(h[:12]) + "@" + domain
}

// buildEML writes an RFC 5322 message: multipart/mixed holding a
// multipart/alternative (text, HTML) and the attachment. Every byte is a
// function of the spec: boundaries derive from the Message-ID, the Date is
// the spec's, so the same inputs give byte-identical files. (go-mail picks
// random boundaries for nested multiparts, hence the hand-built MIME.) The
// parts are written as mime/multipart's Writer writes them (part headers in
// key order), appended to one buffer (TestBuildEMLMatchesMultipartWriter).
func buildEML(s emlSpec) []byte {
	mixedB, altB := emlBoundaries(s.MessageID)
	var b []byte
	select {
	case b = <-emlBuffers:
	default:
	}
	size := 4096 + len(s.Text) + 2*len(s.HTML)
	if s.Attachment != nil {
		size += (len(s.Attachment.Data)+56)/57*78 + len(s.Attachment.Name)*2
	}
	// Sized once: a large tenant's attachment (110 MB at 100M requests)
	// would otherwise leave the buffer up to twice its size.
	b = slices.Grow(b[:0], size)
	b = appendFold(b, "Date", s.Date.UTC().Format(time.RFC1123Z))
	b = appendFold(b, "From", s.From.String())
	if len(s.To) > 0 {
		to := make([]string, len(s.To))
		for i, a := range s.To {
			to[i] = a.String()
		}
		b = appendFold(b, "To", strings.Join(to, ", "))
	}
	if s.ReplyTo != nil && s.ReplyTo.Address != "" {
		b = appendFold(b, "Reply-To", s.ReplyTo.String())
	}
	b = appendFold(b, "Subject", mime.QEncoding.Encode("utf-8", s.Subject))
	b = appendFold(b, "Message-ID", s.MessageID)
	if s.Supersedes != "" {
		b = appendFold(b, "Supersedes", s.Supersedes)
	}
	if len(s.References) > 0 {
		b = appendFold(b, "References", strings.Join(s.References, " "))
	}
	b = appendFold(b, "Content-Language", s.Lang)
	b = appendFold(b, "MIME-Version", "1.0")
	b = appendFold(b, "Content-Type", `multipart/mixed; boundary="`+mixedB+`"`)
	b = append(b, "\r\n"...)

	// The mixed part's first part, the alternative, and its two parts.
	b = append(append(append(b, "--"...), mixedB...), "\r\n"...)
	b = append(append(append(b, `Content-Type: multipart/alternative; boundary="`...), altB...), "\"\r\n\r\n"...)
	for i, body := range []string{s.Text, s.HTML} {
		if i > 0 {
			b = append(b, "\r\n"...)
		}
		b = append(append(append(b, "--"...), altB...), "\r\n"...)
		b = append(append(append(b, "Content-Transfer-Encoding: quoted-printable\r\nContent-Type: "...), bodyPartTypes[i]...), "\r\n\r\n"...)
		b = appendQP(b, body)
	}
	b = append(append(append(b, "\r\n--"...), altB...), "--\r\n"...)
	if a := s.Attachment; a != nil {
		b = append(append(append(b, "\r\n--"...), mixedB...), "\r\n"...)
		b = append(append(append(b, `Content-Disposition: attachment; filename="`...), a.Name...), "\"\r\n"...)
		b = append(b, "Content-Transfer-Encoding: base64\r\n"...)
		b = append(append(append(append(append(b, "Content-Type: "...), a.ContentType...), `; name="`...), a.Name...), "\"\r\n\r\n"...)
		// Lines of 76 characters: 57 bytes each.
		for i := 0; i < len(a.Data); i += 57 {
			b = append(base64.StdEncoding.AppendEncode(b, a.Data[i:min(i+57, len(a.Data))]), "\r\n"...)
		}
		if len(a.Data) == 0 {
			b = append(b, "\r\n"...)
		}
	}
	return append(append(append(b, "\r\n--"...), mixedB...), "--\r\n"...)
}

// emlBuffers holds the memory of messages already written to the outbox
// (outboxWriter), which buildEML writes the next ones into: a message is
// 16 KB, allocated anew for each of 100,000 notices otherwise. A channel,
// not a sync.Pool, which each GC cycle empties while hundreds of messages
// wait for the disk.
var emlBuffers = make(chan []byte, 320)

// emlBufferMax is the largest buffer emlBuffers keeps: a large tenant's
// notice (150 MB at 100M requests) is not kept for the next ones, of
// which 320 would be gigabytes.
const emlBufferMax = 256 << 10

// reuseEMLBuffer hands a written message's memory back to buildEML.
func reuseEMLBuffer(b []byte) {
	if cap(b) > emlBufferMax {
		return
	}
	select {
	case emlBuffers <- b[:0]:
	default:
	}
}

// emlBoundaries are a message's two MIME boundaries, derived from its
// Message-ID. "=_" can never occur in quoted-printable or base64 bodies.
func emlBoundaries(messageID string) (mixed, alt string) {
	seed := sha256.Sum256([]byte(messageID))
	tag := hex.EncodeToString(seed[:10])
	return "=_mixed_" + tag, "=_alt_" + tag
}

// The types of a message's two body parts (buildEML).
var bodyPartTypes = [2]string{"text/plain; charset=utf-8", "text/html; charset=utf-8"}

// foldHeader writes "Name: value" folded at spaces so lines stay within 78
// characters where the value allows it (RFC 5322 2.2.3).
func foldHeader(name, value string) string { return string(appendFold(nil, name, value)) }

// appendFold appends foldHeader(name, value).
func appendFold(b []byte, name, value string) []byte {
	b = append(append(b, name...), ':')
	n, first := len(name)+1, true // the line's length; no word on it yet
	for {
		word, rest, more := strings.Cut(value, " ")
		if n+1+len(word) > 78 && !first {
			b = append(b, "\r\n"...)
			n = 0
		}
		b = append(append(b, ' '), word...)
		n, first = n+1+len(word), false
		if !more {
			break
		}
		value = rest
	}
	return append(b, "\r\n"...)
}

// appendQP appends s encoded as Go's mime/quotedprintable.Writer (text
// mode) writes it and Close ends it, byte for byte: lines of at most 76
// characters with soft breaks, "=", control and non-ASCII bytes as =XX,
// each line break (\r\n, \r or \n) as \r\n, a space or tab before one
// encoded. One append instead of a Write per line through the multipart
// writer (TestAppendQPMatchesWriter).
func appendQP(dst []byte, s string) []byte {
	const lineMaxLen, upperhex = 76, "0123456789ABCDEF"
	start, cr := len(dst), false // start: where the current line begins
	softBreak := func() {
		dst = append(dst, '=', '\r', '\n')
		start = len(dst)
	}
	encode := func(b byte) {
		if lineMaxLen-1-(len(dst)-start) < 3 {
			softBreak()
		}
		dst = append(dst, '=', upperhex[b>>4], upperhex[b&0x0f])
	}
	checkLastByte := func() {
		if len(dst) > start {
			if b := dst[len(dst)-1]; b == ' ' || b == '\t' {
				dst = dst[:len(dst)-1]
				encode(b)
			}
		}
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b == '\n' || b == '\r':
			if cr && b == '\n' { // the \r already ended the line
				cr = false
				continue
			}
			cr = b == '\r'
			checkLastByte()
			dst = append(dst, '\r', '\n')
			start = len(dst)
		case qpPlain(b):
			// A run of bytes written as they are, in pieces that fill
			// each line to 75 characters before a soft break.
			j := i + 1
			for j < len(s) && qpPlain(s[j]) {
				j++
			}
			for i < j {
				room := lineMaxLen - 1 - (len(dst) - start)
				if room == 0 {
					softBreak()
					continue
				}
				n := min(room, j-i)
				dst = append(dst, s[i:i+n]...)
				i += n
			}
			i--
			cr = false
		default:
			encode(b) // leaves cr as it is, as the Writer does
		}
	}
	checkLastByte()
	return dst
}

// qpPlain: a byte quoted-printable writes as it is.
func qpPlain(b byte) bool { return b >= '!' && b <= '~' && b != '=' || b == ' ' || b == '\t' }
