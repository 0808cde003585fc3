package textmatch

import (
	"slices"
	"testing"
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
