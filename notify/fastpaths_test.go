// The draft's hand-made fast paths, each held to the code it stands for.

package notify

import (
	"html"
	"maps"
	"math/rand/v2"
	"testing"
	"time"
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
