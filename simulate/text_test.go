package simulate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTextProfile: the vocabulary has thousands of words with a Zipf
// profile (rank r drawn about 1/r as often as rank 1), so ordinary phrases
// recur by chance; a third of the tenants use a template, and their
// prompts start with it and their responses echo it.
func TestTextProfile(t *testing.T) {
	v := words()
	if len(v) != vocabSize || vocabSize < 5000 {
		t.Fatalf("vocabulary %d words", len(v))
	}
	count := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 2_000_000
	for _, w := range randomWords(rng, n) {
		count[w]++
	}
	h := 0.0
	for i := 1; i <= vocabSize; i++ {
		h += 1 / float64(i)
	}
	for _, rank := range []int{1, 2, 10, 100} {
		want := n / h / float64(rank)
		if got := float64(count[v[rank-1]]); math.Abs(got-want) > 0.05*want {
			t.Errorf("rank %d (%q): %v draws, want about %.0f", rank, v[rank-1], got, want)
		}
	}
	if len(count) < 5000 {
		t.Errorf("only %d distinct words in %d draws", len(count), n)
	}

	with := 0
	const tenants = 3000
	for i := 0; i < tenants; i++ {
		if templateOf(7, i, true) >= 0 {
			with++
		}
		if templateOf(7, i, false) >= 0 {
			t.Fatal("a template with templates off")
		}
	}
	if f := float64(with) / tenants; math.Abs(f-1.0/3) > 0.03 {
		t.Errorf("%.3f of tenants use a template, want a third", f)
	}
	o := &owner{textSeed: 99, template: 1}
	p, r := promptText(o), responseText(o)
	if !strings.HasPrefix(p, strings.Join(tmpl[1], " ")+" ") {
		t.Errorf("prompt does not start with its template: %q", p)
	}
	shared := 0
	for i := 0; i+8 <= templateLen; i++ {
		if strings.Contains(r, strings.Join(tmpl[1][i:i+8], " ")) {
			shared++
		}
	}
	if shared == 0 {
		t.Errorf("response %q echoes no 8 words of its template", r)
	}
}
