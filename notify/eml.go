package notify

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
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
// random boundaries for nested multiparts, hence the hand-built MIME.)
func buildEML(s emlSpec) []byte {
	mixedB, altB := emlBoundaries(s.MessageID)

	var b bytes.Buffer
	if p, _ := emlBuffers.Get().(*[]byte); p != nil {
		b = *bytes.NewBuffer((*p)[:0])
	}
	b.Grow(4096 + len(s.Text) + 2*len(s.HTML))
	header := func(name, value string) { b.WriteString(foldHeader(name, value)) }
	header("Date", s.Date.UTC().Format(time.RFC1123Z))
	header("From", s.From.String())
	if len(s.To) > 0 {
		to := make([]string, len(s.To))
		for i, a := range s.To {
			to[i] = a.String()
		}
		header("To", strings.Join(to, ", "))
	}
	if s.ReplyTo != nil && s.ReplyTo.Address != "" {
		header("Reply-To", s.ReplyTo.String())
	}
	header("Subject", mime.QEncoding.Encode("utf-8", s.Subject))
	header("Message-ID", s.MessageID)
	if s.Supersedes != "" {
		header("Supersedes", s.Supersedes)
	}
	if len(s.References) > 0 {
		header("References", strings.Join(s.References, " "))
	}
	header("Content-Language", s.Lang)
	header("MIME-Version", "1.0")
	header("Content-Type", `multipart/mixed; boundary="`+mixedB+`"`)
	b.WriteString("\r\n")

	mixed := multipart.NewWriter(&b)
	_ = mixed.SetBoundary(mixedB)
	altPart, _ := mixed.CreatePart(altPartHeader(altB))
	alt := multipart.NewWriter(altPart)
	_ = alt.SetBoundary(altB)
	for i, body := range []string{s.Text, s.HTML} {
		w, _ := alt.CreatePart(bodyPartHeader(bodyPartTypes[i]))
		w.Write(appendQP(b.AvailableBuffer(), body))
	}
	alt.Close()
	if a := s.Attachment; a != nil {
		w, _ := mixed.CreatePart(attachmentPartHeader(a))
		enc := base64.StdEncoding.EncodeToString(a.Data)
		for len(enc) > 76 {
			w.Write([]byte(enc[:76] + "\r\n"))
			enc = enc[76:]
		}
		w.Write([]byte(enc + "\r\n"))
	}
	mixed.Close()
	return b.Bytes()
}

// emlBuffers holds the memory of messages already written to the outbox
// (outboxWriter), which buildEML writes the next ones into: a message is
// 16 KB, allocated anew for each of 100,000 notices otherwise.
var emlBuffers sync.Pool

// emlBoundaries are a message's two MIME boundaries, derived from its
// Message-ID. "=_" can never occur in quoted-printable or base64 bodies.
func emlBoundaries(messageID string) (mixed, alt string) {
	seed := sha256.Sum256([]byte(messageID))
	tag := hex.EncodeToString(seed[:10])
	return "=_mixed_" + tag, "=_alt_" + tag
}

// The headers of a message's parts (buildEML), in one place.
var bodyPartTypes = [2]string{"text/plain; charset=utf-8", "text/html; charset=utf-8"}

func altPartHeader(altB string) textproto.MIMEHeader {
	return textproto.MIMEHeader{"Content-Type": {`multipart/alternative; boundary="` + altB + `"`}}
}

func bodyPartHeader(ctype string) textproto.MIMEHeader {
	return textproto.MIMEHeader{"Content-Type": {ctype}, "Content-Transfer-Encoding": {"quoted-printable"}}
}

func attachmentPartHeader(a *attachment) textproto.MIMEHeader {
	return textproto.MIMEHeader{
		"Content-Type":              {a.ContentType + `; name="` + a.Name + `"`},
		"Content-Disposition":       {`attachment; filename="` + a.Name + `"`},
		"Content-Transfer-Encoding": {"base64"},
	}
}

// foldHeader writes "Name: value" folded at spaces so lines stay within 78
// characters where the value allows it (RFC 5322 2.2.3).
func foldHeader(name, value string) string {
	var b strings.Builder
	line := name + ":"
	for _, word := range strings.Split(value, " ") {
		if len(line)+1+len(word) > 78 && line != name+":" {
			b.WriteString(line + "\r\n")
			line = ""
		}
		line += " " + word
	}
	b.WriteString(line + "\r\n")
	return b.String()
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
