package notify

import (
	"bytes"
	"math/rand/v2"
	"mime/quotedprintable"
	"strings"
	"testing"
)

// appendQP writes what Go's quotedprintable.Writer writes, on hostile
// strings (line breaks of every kind next to spaces, =, control and
// non-ASCII bytes, lines around the 76-character limit) and on the bodies
// of real notices.
func TestAppendQPMatchesWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 14))
	alphabet := []string{"a", "Z", " ", "\t", "\r", "\n", "\r\n", "=", "é", "\x00", "\x7f", "\xff", "~", "!", strings.Repeat("x", 70)}
	cases := []string{"", " ", "\t", "\r", "\n", "a \r\nb", "a\r\r\nb", "\r\x80\n", strings.Repeat("y", 75) + "=", strings.Repeat("y", 74) + " \n"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	v := baseTenantView(t, "fr", mustIncident())
	v.Source, v.SourceTier = true, "probable"
	r, err := render("tenant", "fr", v)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, r.Text, r.HTML)
	for _, s := range cases {
		var want bytes.Buffer
		w := quotedprintable.NewWriter(&want)
		w.Write([]byte(s))
		w.Close()
		prefix := []byte("prefix\r\n")
		got := appendQP(bytes.Clone(prefix), s)
		if !bytes.Equal(got[len(prefix):], want.Bytes()) || !bytes.Equal(got[:len(prefix)], prefix) {
			t.Fatalf("%q:\nwant %q\n got %q", s, want.Bytes(), got[len(prefix):])
		}
	}
}
