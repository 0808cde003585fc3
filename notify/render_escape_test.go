package notify

import (
	"html"
	"math/rand/v2"
	"testing"
)

// TestAppendEscapedIsEscapeString holds appendEscaped to html.EscapeString.
func TestAppendEscapedIsEscapeString(t *testing.T) {
	pieces := []string{"<", ">", "&", "'", `"`, "a", "é", "&amp;", " ", "\x00", "\xff", "l'été <b>"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		s := ""
		for k := rng.IntN(8); k >= 0; k-- {
			s += pieces[rng.IntN(len(pieces))]
		}
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
	rng := rand.New(rand.NewPCG(9, 4))
	linked := 0
	for n := 0; n < 50000; n++ {
		s := ""
		for k := rng.IntN(10); k >= 0; k-- {
			s += pieces[rng.IntN(len(pieces))]
		}
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
