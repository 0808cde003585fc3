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
