// The draft's hand-made fast paths, each held to the code it stands for.

package notify

import (
	"bytes"
	"encoding/binary"
	"html"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"mime/quotedprintable"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAppendEscapedIsEscapeString holds appendEscaped to html.EscapeString.
func TestAppendEscapedIsEscapeString(t *testing.T) {
	pieces := []string{"<", ">", "&", "'", `"`, "a", "é", "&amp;", " ", "\x00", "\xff", "l'été <b>"}
	for s := range randomJoins(1, pieces, 20000, 9) {
		if got, want := string(appendEscaped([]byte("x"), s)), "x"+html.EscapeString(s); got != want {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	}
}

// TestAppendLinkedIsEmailRE holds the hand-made address finder to emailRE's
// own matches, on random texts of addresses, near-addresses and their
// separators.
func TestAppendLinkedIsEmailRE(t *testing.T) {
	pieces := []string{"a", "Z9", ".", "-", "_", "%", "+", "@", " ", "é", "&amp;", ";", "x.y", "@b.c", "ops@c01.example", "a@b", "@", "..", ".@", "b.", "-x", "dpo@inference.example.", "\t", "<", "@@"}
	linked := 0
	for s := range randomJoins(9, pieces, 50000, 11) {
		want := emailRE.ReplaceAllStringFunc(s, func(a string) string {
			return `<a href="mailto:` + a + `">` + a + `</a>`
		})
		if got := string(appendLinked([]byte("x"), s)); got != "x"+want {
			t.Fatalf("%q: got %q, want %q", s, got[1:], want)
		}
		if want != s {
			linked++
		}
	}
	if linked < 5000 {
		t.Fatalf("only %d of 50000 texts hold an address: the test says little", linked)
	}
}

// TestAddTimeMemoIsFormat holds the memoised date parts to formatting each
// time afresh, over instants that share seconds or nanoseconds and years
// far outside UnixNano's range.
func TestAddTimeMemoIsFormat(t *testing.T) {
	base := []time.Time{
		time.Date(2026, 8, 27, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 8, 27, 0, 0, 0, 1, time.UTC),
		time.Date(2026, 8, 27, 0, 0, 1, 0, time.FixedZone("x", 3600)),
		time.Date(1500, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2500, 11, 12, 13, 14, 15, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	}
	for round := 0; round < 2; round++ { // the second round reads the memo
		for _, tm := range base {
			got := numberSet{}
			got.addTime(tm)
			want := numberSet{}
			u := tm.UTC()
			for _, layout := range []string{"2006", "01", "1", "02", "2", "15", "3", "04", "05"} {
				want[u.Format(layout)] = true
			}
			if !maps.Equal(got, want) {
				t.Fatalf("%v (round %d): got %v, want %v", tm, round, got, want)
			}
		}
	}
}

// TestQPDecodedMatchesReader holds appendQPDecoded to mime/quotedprintable on
// random lines of the bytes that matter (escapes, soft breaks, blanks, bare
// LF, bytes outside printable ASCII): whatever it accepts, it decodes as the
// reader does.
func TestQPDecodedMatchesReader(t *testing.T) {
	pieces := []string{"a", "Zz", " ", "\t", "=", "=3D", "=C3=A9", "=c3", "=0", "=\r\n", "\r\n", "\n", "\r", "~!", "\xc3\xa9", "\x00", "=20\r\n", "plain words here ", "=\r\n "}
	accepted := 0
	for s := range randomJoins(7, pieces, 20000, 13) {
		b := []byte(s)
		got, ok := appendQPDecoded([]byte("prefix:"), b)
		if !ok {
			continue
		}
		accepted++
		want, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("%q: accepted, but the reader fails: %v", b, err)
		}
		if string(got) != "prefix:"+string(want) {
			t.Fatalf("%q: got %q, the reader gives %q", b, got[len("prefix:"):], want)
		}
	}
	if accepted < 2000 {
		t.Fatalf("only %d of 20000 inputs accepted: the test says little", accepted)
	}
}

// TestQPSpecialWord holds qpSpecialWord to the byte table it reads a word
// of at a time (tabs it leaves to the table): random words of the bytes at the edges (0x1f-0x21, 0x3c-
// 0x3e, 0x7e-0x80, 0xfe, 0xff, tab) and of any byte.
func TestQPSpecialWord(t *testing.T) {
	edges := []byte{0x00, 0x09, 0x1f, 0x20, 0x21, 0x3c, '=', 0x3e, 0x7e, 0x7f, 0x80, 0xfe, 0xff, 'a', 'Z'}
	r := rand.New(rand.NewPCG(8, 27))
	special := 0
	for i := range 200000 {
		var b [8]byte
		for k := range b {
			if i%2 == 0 {
				b[k] = edges[r.IntN(len(edges))]
			} else {
				b[k] = byte(r.IntN(256))
			}
			if i%5 == 0 && r.IntN(2) == 0 {
				b[k] = 'a' + byte(r.IntN(26)) // mostly literal words
			}
		}
		want := false // a tab is literal, but the word test leaves it to the table
		for _, c := range b {
			want = want || !qpLiteral[c] || c == '\t'
		}
		if got := qpSpecialWord(binary.LittleEndian.Uint64(b[:])); got != want {
			t.Fatalf("% x: qpSpecialWord %v, the table says %v", b, got, want)
		}
		if want {
			special++
		}
	}
	if special < 1000 || special > 199000 {
		t.Fatalf("%d of 200000 words special: the test says little", special)
	}
}

// TestUnescapedMatchesHTML holds appendUnescaped to html.UnescapeString on
// random texts of references, near-references and plain bytes.
func TestUnescapedMatchesHTML(t *testing.T) {
	pieces := []string{"&amp;", "&lt;", "&gt;", "&quot;", "&#34;", "&#39;", "&", "&amp", "&lt", "&ltx;", "&#39", "&#x27;", "&nbsp;", "&eacute;", "&amp;lt;", ";", "#", "a", " l'été ", "<", "\xc3\xa9", "\xff"}
	accepted := 0
	for s := range randomJoins(3, pieces, 20000, 11) {
		b := []byte(s)
		got, _ := unescapeInto(nil, b)
		if want := html.UnescapeString(string(b)); got != want {
			t.Fatalf("%q: got %q, html gives %q", b, got, want)
		}
		if out, ok := appendUnescaped([]byte("x"), b); ok {
			accepted++
			if want := "x" + html.UnescapeString(string(b)); string(out) != want {
				t.Fatalf("%q: appendUnescaped gives %q, html %q", b, out[1:], want[1:])
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d of 20000 inputs accepted: the test says little", accepted)
	}
}

// emailRE is what a notice's HTML links as an e-mail address: appendLinked
// finds its matches by hand.
var emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`)

// randomJoins yields n texts, each of 1 to most pieces drawn at random
// (seeded: the same texts on every run).
func randomJoins(seed uint64, pieces []string, n, most int) iter.Seq[string] {
	return func(yield func(string) bool) {
		rng := rand.New(rand.NewPCG(seed, seed+1))
		for range n {
			var b strings.Builder
			for k := 1 + rng.IntN(most); k > 0; k-- {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			if !yield(b.String()) {
				return
			}
		}
	}
}
