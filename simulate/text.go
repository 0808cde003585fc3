package simulate

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// Logged texts are random words from a fixed vocabulary of vocabSize
// pronounceable made-up words, drawn uniformly: two unrelated texts share
// five consecutive words with probability about vocabSize^-5 per pair of
// positions, so any shared shingle is a planted leak.
const vocabSize = 8192

var (
	vocabOnce sync.Once
	vocab     []string
)

func words() []string {
	vocabOnce.Do(func() {
		onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "st", "tr"}
		nuclei := []string{"a", "e", "i", "o", "u", "ai", "ou"}
		codas := []string{"", "", "n", "r", "s", "l"}
		rng := rand.New(rand.NewPCG(0x6c65616b, 0x6d6170)) // fixed: the vocabulary never changes
		seen := map[string]bool{}
		for len(vocab) < vocabSize {
			var b strings.Builder
			syl := 2 + rng.IntN(2)
			for i := 0; i < syl; i++ {
				b.WriteString(onsets[rng.IntN(len(onsets))])
				b.WriteString(nuclei[rng.IntN(len(nuclei))])
			}
			b.WriteString(codas[rng.IntN(len(codas))])
			w := b.String()
			if !seen[w] {
				seen[w] = true
				vocab = append(vocab, w)
			}
		}
	})
	return vocab
}

// randomWords returns n words drawn from rng.
func randomWords(rng *rand.Rand, n int) []string {
	v := words()
	out := make([]string, n)
	for i := range out {
		out[i] = v[rng.IntN(len(v))]
	}
	return out
}

// promptWords regenerates a prompt's words from its seed: the replay keeps
// only the seed of each slot owner, never the text.
func promptWords(seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x70726f6d7074))
	return randomWords(rng, 18+rng.IntN(23)) // 18..40 words
}

// mix is splitmix64's finaliser: a bijection on uint64, so distinct inputs
// give distinct outputs (request ids never collide).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
