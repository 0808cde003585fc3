package textmatch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestShingles(t *testing.T) {
	hashes := func(s string) []uint64 {
		h, _ := Shingles(s, nil, nil)
		return h
	}
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"case and punctuation", "The quick brown fox jumps", "...the QUICK, brown fox; jumps!", true},
		{"unicode letters", "Économie de l'été à Zürich", "ÉCONOMIE DE L ÉTÉ À ZÜRICH", true},
		{"digits are words", "order 1234 shipped to paris today", "order 1234 shipped to paris today", true},
		{"word order matters", "a b c d e", "a b c e d", false},
		{"joined words differ", "alpha beta gamma delta epsilon", "alphabeta gamma delta epsilon zeta", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := hashes(tc.a), hashes(tc.b)
			if len(a) == 0 {
				t.Fatalf("%q has no shingle", tc.a)
			}
			if got := slices.Equal(a, b); got != tc.same {
				t.Errorf("same=%v, want %v (%x vs %x)", got, tc.same, a, b)
			}
		})
	}
	if n := len(hashes("one two three four")); n != 0 {
		t.Errorf("4 words: %d shingles, want 0", n)
	}
	if n := len(hashes("one two three four five six seven")); n != 3 {
		t.Errorf("7 words: %d shingles, want 3", n)
	}
}

// TestWordHashesDefinition: WordHashes equals the definition in
// ShingleWords' comment, written plainly rune by rune, on random mixes of
// ASCII, multi-byte letters and digits (one lowercasing to ASCII), symbols
// and broken UTF-8.
func TestWordHashesDefinition(t *testing.T) {
	definition := func(text string) []uint64 {
		var out []uint64
		var h uint64
		in := false
		for _, r := range text {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if !in {
					h, in = fnvOffset, true
				}
				for _, b := range []byte(string(unicode.ToLower(r))) {
					h = (h ^ uint64(b)) * fnvPrime
				}
			} else if in {
				out = append(out, h)
				in = false
			}
		}
		if in {
			out = append(out, h)
		}
		return out
	}
	pieces := []string{"a", "Z", "q", "7", " ", ",", "'", "-", "\n", "\t", "É", "é", "ß", "İ", "\u212a", "Ω",
		"日本", "٣", "🙂", "\u00a0", "\xff", "\xe2\x82", "\xc3", "€", "Ǆ", "ﬁ"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.IntN(40); k > 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		if got, want := WordHashes(text, nil), definition(text); !slices.Equal(got, want) {
			t.Fatalf("WordHashes(%q) = %x, want %x", text, got, want)
		}
	}
}
