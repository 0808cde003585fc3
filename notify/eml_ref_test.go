package notify

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

// buildEMLReference is buildEML as it was written through mime/multipart's
// Writer: the tests hold buildEML to it byte for byte.
func buildEMLReference(s emlSpec) []byte {
	mixedB, altB := emlBoundaries(s.MessageID)

	var b bytes.Buffer
	b.Grow(4096 + len(s.Text) + 2*len(s.HTML))
	header := func(name, value string) { b.WriteString(foldHeaderReference(name, value)) }
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

// foldHeader writes "Name: value" folded at spaces so lines stay within 78
// characters where the value allows it (RFC 5322 2.2.3).
func foldHeaderReference(name, value string) string {
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

// buildEML writes byte for byte what it wrote through mime/multipart's
// Writer, and appendFold what foldHeader wrote, whatever the spec: hostile
// bodies, names and subjects, long and empty values, every optional header,
// attachments of every length around the base64 line's 57 bytes, with and
// without one, in memory reused from earlier messages.
func TestBuildEMLMatchesMultipartWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := []string{"a", "Z", "0", " ", "  ", "\t", "\r", "\n", "\r\n", "=", "-", "--", "é", "日本", "\x00", "\xff", "\"", ";", ":", "<", ">", "&",
		strings.Repeat("w", 70), strings.Repeat("long ", 20), "=_alt_", "=?utf-8?q?x?="}
	texts := randomStrings(r, alphabet, 400, 30, "", " ", "x", strings.Repeat("y", 200), "a b  c   ", " lead", "trail ")
	for i, text := range texts {
		pick := func() string { return texts[r.IntN(len(texts))] }
		spec := emlSpec{From: mail.Address{Name: pick(), Address: "a@b.example"}, Subject: pick(), MessageID: fmt.Sprintf("<m%d@x>", i),
			Date: time.Date(2026, 9, 1+i%28, i%24, 0, 0, 0, time.FixedZone("z", 3600*(i%5))), Lang: []string{"en", "fr", ""}[i%3], Text: text, HTML: pick()}
		for range r.IntN(4) {
			spec.To = append(spec.To, mail.Address{Name: pick(), Address: fmt.Sprintf("u%d@y.example", r.IntN(100))})
		}
		if r.IntN(2) == 0 {
			spec.ReplyTo = &mail.Address{Name: pick(), Address: []string{"", "dpo@z.example"}[r.IntN(2)]}
		}
		if r.IntN(3) == 0 {
			spec.Supersedes = "<old@x>"
			spec.References = []string{"<older@x>", "<old@x>"}
		}
		if r.IntN(4) != 0 {
			data := make([]byte, []int{0, 1, 2, 3, 56, 57, 58, 114, 171, 1000, r.IntN(3000)}[r.IntN(11)])
			for j := range data {
				data[j] = byte(r.IntN(256))
			}
			spec.Attachment = &attachment{Name: pick(), ContentType: "text/csv; charset=utf-8", Data: data}
		}
		got, want := buildEML(spec), buildEMLReference(spec)
		if !bytes.Equal(got, want) {
			t.Fatalf("spec %d: buildEML differs from the multipart writer's\nwant %q\n got %q", i, want, got)
		}
		reuseEMLBuffer(got) // the next messages are built in used memory
		for _, name := range []string{"Subject", "X", strings.Repeat("N", 90)} {
			if v := pick(); foldHeader(name, v) != foldHeaderReference(name, v) {
				t.Fatalf("%s: %q: foldHeader %q, was %q", name, v, foldHeader(name, v), foldHeaderReference(name, v))
			}
		}
	}
}
