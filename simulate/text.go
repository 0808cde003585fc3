package simulate

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// Logged texts look like natural language to a shingle matcher: words are
// drawn from a vocabulary of vocabSize words with a Zipf frequency profile
// (rank r has weight 1/r; the most common hundred are real English function
// words), so ordinary phrases recur across unrelated tenants by chance.
// Templates make it harder: a third of the text-logging tenants start every
// prompt with one of three shared templates (a system prompt, an agent
// framework's preamble), and their responses echo part of it. A leak copies
// a run of 12 to 16 of the source's own words (never its template), so the
// truth of the confirmed tier is the set of planted copies.
const (
	vocabSize   = 6000
	zipfBits    = 20 // the sampler's table: 2^20 cells, finer than the rarest word
	templates   = 3
	templateLen = 32
	leakMin     = 12 // words copied from a source's prompt, at least
	leakSpread  = 5  // ... and at most leakMin+leakSpread-1
)

// common are the most frequent words, in rank order.
var common = strings.Fields(`the of and to a in is that for it as was with be by on not he i
this are or his from at which but have an had they you were their one all we can her has
there been if more when will would who so no she other its may these about some what out
into them than then only could time also new any two do like our first most made over such
after well even many must before through where much your years way should very those between
each under used being both same how long because work people while own three life world since`)

var (
	vocabOnce sync.Once
	vocab     []string
	zipf      []uint16 // cell -> word rank
	tmpl      [templates][]string
)

func words() []string {
	vocabOnce.Do(func() {
		onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "st", "tr"}
		nuclei := []string{"a", "e", "i", "o", "u", "ai", "ou"}
		codas := []string{"", "", "n", "r", "s", "l"}
		rng := rand.New(rand.NewPCG(0x6c65616b, 0x6d6170)) // fixed: the vocabulary never changes
		seen := map[string]bool{}
		for _, w := range common {
			if !seen[w] {
				seen[w] = true
				vocab = append(vocab, w)
			}
		}
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
		var total float64
		cdf := make([]float64, vocabSize)
		for i := range cdf {
			total += 1 / float64(i+1)
			cdf[i] = total
		}
		zipf = make([]uint16, 1<<zipfBits)
		k := 0
		for c := range zipf {
			x := (float64(c) + 0.5) / float64(len(zipf)) * total
			for k < vocabSize-1 && cdf[k] < x {
				k++
			}
			zipf[c] = uint16(k)
		}
		trng := rand.New(rand.NewPCG(0x74656d70, 0x6c617465))
		for i := range tmpl {
			tmpl[i] = draw(trng, templateLen)
		}
	})
	return vocab
}

// randomWords returns n words drawn from rng with the vocabulary's Zipf profile.
func randomWords(rng *rand.Rand, n int) []string {
	words()
	return draw(rng, n)
}

// draw is randomWords once the vocabulary is built.
func draw(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = vocab[zipf[rng.Uint32()>>(32-zipfBits)]]
	}
	return out
}

// templateOf is the template a tenant starts its prompts with (-1: none):
// a third of the tenants, drawn from the seed apart from the clean data's
// random stream, so turning templates on changes nothing but the texts.
func templateOf(seed int64, tenant int, on bool) int8 {
	if !on {
		return -1
	}
	x := mix(uint64(seed)<<20 ^ uint64(tenant) ^ 0x746d706c)
	if x%3 != 0 {
		return -1
	}
	return int8(x / 3 % templates)
}

// ownWords regenerates the words a prompt adds after its template: the
// replay keeps only the seed of each slot owner, never the text.
func ownWords(seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x70726f6d7074))
	return randomWords(rng, 18+rng.IntN(23)) // 18..40 words
}

// promptText is a logged prompt: its owner's template, then its own words.
func promptText(o *owner) string {
	w := ownWords(o.textSeed)
	if o.template >= 0 {
		words()
		w = append(append([]string(nil), tmpl[o.template]...), w...)
	}
	return strings.Join(w, " ")
}

// echo is what a response repeats of its tenant's template (nothing without one).
func echo(rng *rand.Rand, template int8) []string {
	if template < 0 {
		return nil
	}
	words()
	n := 8 + rng.IntN(9) // 8..16 words
	at := rng.IntN(templateLen - n + 1)
	return tmpl[template][at : at+n]
}

// responseText is an ordinary logged response: an echo of the tenant's
// template, among words of its own.
func responseText(o *owner) string {
	rng := rand.New(rand.NewPCG(o.textSeed, 0x72657370))
	parts := []string{strings.Join(randomWords(rng, 2+rng.IntN(6)), " ")}
	if e := echo(rng, o.template); e != nil {
		parts = append(parts, strings.Join(e, " "))
	}
	parts = append(parts, strings.Join(randomWords(rng, 8+rng.IntN(23)), " "))
	return strings.Join(parts, " ")
}

// leakedResponse is a trigger's logged response, generated from stale KV:
// an echo of its own template, then for each leaking source a copied run of
// the source's own words, among random words.
func leakedResponse(rng *rand.Rand, trig *owner, sources []*owner) string {
	parts := []string{strings.Join(randomWords(rng, 3+rng.IntN(4)), " ")}
	if e := echo(rng, trig.template); e != nil {
		parts = append(parts, strings.Join(e, " "), strings.Join(randomWords(rng, 2+rng.IntN(3)), " "))
	}
	for _, s := range sources {
		w := ownWords(s.textSeed)
		n := leakMin + rng.IntN(leakSpread)
		at := rng.IntN(len(w) - n + 1)
		parts = append(parts, strings.Join(w[at:at+n], " "), strings.Join(randomWords(rng, 2+rng.IntN(3)), " "))
	}
	return strings.Join(parts, " ")
}

// mix is splitmix64's finaliser: a bijection on uint64, so distinct inputs
// give distinct outputs (request ids never collide).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
