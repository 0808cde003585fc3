package notify

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
)

// parsedMail is a message decoded by the tests, independently of the
// isolation check's decoder.
type parsedMail struct {
	header         mail.Header
	subject        string
	text, html     string
	attachment     string
	attachmentName string
	lang           string
}

func decodeForTest(t testing.TB, raw string) parsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("not an RFC 5322 message: %v", err)
	}
	var p parsedMail
	p.header = msg.Header
	p.subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("subject: %v", err)
	}
	p.lang = msg.Header.Get("Content-Language")
	var walk func(ctype, cte, disp string, r io.Reader)
	walk = func(ctype, cte, disp string, r io.Reader) {
		mt, params, err := mime.ParseMediaType(ctype)
		if err != nil {
			t.Fatalf("content-type %q: %v", ctype, err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				part, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatalf("multipart: %v", err)
				}
				walk(part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part.Header.Get("Content-Disposition"), part)
			}
		}
		switch cte {
		case "quoted-printable":
			r = quotedprintable.NewReader(r)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, r)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		switch {
		case strings.HasPrefix(disp, "attachment"):
			_, dp, _ := mime.ParseMediaType(disp)
			p.attachment, p.attachmentName = string(b), dp["filename"]
		case mt == "text/plain":
			p.text = strings.ReplaceAll(string(b), "\r\n", "\n")
		case mt == "text/html":
			p.html = strings.ReplaceAll(string(b), "\r\n", "\n")
		}
	}
	walk(msg.Header.Get("Content-Type"), "", "", msg.Body)
	return p
}
