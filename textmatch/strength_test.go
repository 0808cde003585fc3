package textmatch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/incident"
)

func sh(text string) []uint64 {
	h, _ := Shingles(text, nil, nil)
	return h
}

// gen makes n distinct made-up words from a seed: unrelated texts share no
// phrase unless a test puts one in.
func gen(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%x", r.Uint64()>>20)
	}
	return out
}

func join(parts ...[]string) string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return strings.Join(all, " ")
}

// commonAt is what the case would say of resp: the shingles of held (text
// many tenants' prompts hold), as a set of hashes.
func commonAt(resp []uint64, held ...string) map[uint64]bool {
	set := map[uint64]bool{}
	for _, t := range held {
		for _, h := range sh(t) {
			set[h] = true
		}
	}
	return set
}

func measure(response, ownPrompt, source string, common ...string) Strength {
	r := sh(response)
	var own *Prompt
	if ownPrompt != "" {
		own = NewPrompt(sh(ownPrompt))
	}
	return Measure(NewResponse(r, own, commonAt(r, common...)), NewPrompt(sh(source)))
}

func TestStrength(t *testing.T) {
	def := incident.DefaultEvidence
	template := gen(1, 30)                                            // shared by several tenants' prompts
	secret := gen(2, 40)                                              // the source's own words
	phrase := []string{"as", "well", "as", "in", "the", "case", "of"} // an ordinary phrase
	tests := []struct {
		name               string
		response, own, src string
		common             []string
		want               Strength
		strong             bool
		atLeast            bool // the run continues into text around it: want is a floor
	}{
		{"unrelated", join(gen(3, 30)), join(gen(4, 20)), join(secret), nil, Strength{}, false, false},
		{"chance phrase", join(gen(3, 10), phrase, gen(5, 10)), join(gen(4, 20)), join(gen(6, 10), phrase, secret),
			nil, Strength{Shingles: 3, Run: 7, Rare: 3}, false, false},
		{"own template echoed, source has the same template", join(gen(3, 4), template[2:20], gen(5, 10)),
			join(template, gen(4, 20)), join(template, secret), nil, Strength{Shingles: 14}, false, false},
		{"boilerplate many tenants hold, not in the own prompt", join(gen(3, 4), template[0:24], gen(5, 10)),
			join(gen(4, 20)), join(template, secret), []string{join(template)}, Strength{Shingles: 20}, false, false},
		{"copied run", join(gen(3, 4), secret[10:22], gen(5, 3)), join(gen(4, 20)), join(secret),
			nil, Strength{Shingles: 8, Run: 12, Rare: 8}, true, false},
		{"copied run, source begins with a shared template, response echoes it too",
			join(gen(3, 4), template[0:12], gen(5, 3), secret[5:17], gen(6, 3)),
			join(template, gen(4, 20)), join(template, secret), []string{join(template)},
			Strength{Shingles: 16, Run: 12, Rare: 8}, true, false},
		// The source has the template right before its words, so the
		// shingles across the seam are its own text too.
		{"copied run next to boilerplate", join(template[10:30], secret[0:12], gen(5, 3)),
			join(gen(4, 20)), join(template, secret), []string{join(template)},
			Strength{Shingles: 28, Run: 12, Rare: 8}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := measure(tc.response, tc.own, tc.src, tc.common...)
			if tc.atLeast {
				if got.Shingles != tc.want.Shingles || got.Run < tc.want.Run || got.Rare < tc.want.Rare || got.Rare > tc.want.Rare+ShingleWords-1 {
					t.Errorf("got %+v, want at least %+v", got, tc.want)
				}
			} else if tc.want.Shingles > 0 && got.Shingles != tc.want.Shingles || got.Run != tc.want.Run || got.Rare != tc.want.Rare {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if got.Strong(def) != tc.strong {
				t.Errorf("%+v: strong=%v, want %v", got, got.Strong(def), tc.strong)
			}
		})
	}
}

// TestThresholdEdges: a copied run of exactly the thresholds is strong,
// one word or one shingle less is not.
func TestThresholdEdges(t *testing.T) {
	secret := gen(9, 60)
	for _, tc := range []struct {
		name   string
		th     incident.Evidence
		words  int
		strong bool
	}{
		{"run at min_run_words", incident.Evidence{MinShingles: 1, MinRunWords: 10, CommonTenants: 3}, 10, true},
		{"run one word short", incident.Evidence{MinShingles: 1, MinRunWords: 10, CommonTenants: 3}, 9, false},
		{"shingles at min_shingles", incident.Evidence{MinShingles: 8, MinRunWords: 8, CommonTenants: 3}, 12, true},
		{"one shingle short", incident.Evidence{MinShingles: 9, MinRunWords: 8, CommonTenants: 3}, 12, false},
		{"defaults: 10 words", incident.DefaultEvidence, 10, true},
		{"defaults: 9 words", incident.DefaultEvidence, 9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := measure(join(gen(1, 5), secret[20:20+tc.words], gen(2, 5)), "", join(secret))
			if s.Run != tc.words || s.Rare != tc.words-ShingleWords+1 {
				t.Fatalf("%d copied words: %+v", tc.words, s)
			}
			if s.Strong(tc.th) != tc.strong {
				t.Errorf("%+v with %+v: strong=%v, want %v", s, tc.th, s.Strong(tc.th), tc.strong)
			}
		})
	}
	// Here, the same run is strong unless its shingles are common (which
	// ones are is counted in the case: TestCommonTenantsEdge in package sweep).
	resp := sh(join(gen(1, 5), secret[0:16], gen(2, 5)))
	src := NewPrompt(sh(join(secret)))
	if s := Measure(NewResponse(resp, nil, nil), src); !s.Strong(incident.DefaultEvidence) {
		t.Errorf("rare run: %+v not strong", s)
	}
	if s := Measure(NewResponse(resp, nil, commonAt(resp, join(secret))), src); s.Rare != 0 || s.Run != 0 {
		t.Errorf("common run: %+v, want no weight", s)
	}
}

// TestCommonPhraseInsideCopy: a common phrase (one shingle many tenants'
// prompts hold) inside a copied run takes the weight of that shingle only,
// never of its neighbours: the run is cut there, and is strong when one side
// is still long enough (at 2,000 tenants, an earlier rule that let a common
// shingle take its neighbours' weight lost real copies).
func TestCommonPhraseInsideCopy(t *testing.T) {
	secret := gen(11, 40)
	for _, tc := range []struct {
		name      string
		words, at int // copied words, offset of the common shingle in the copy
		rare, run int
		strong    bool
	}{
		{"no common shingle", 14, -1, 10, 14, true},
		{"near the start: 8 shingles after it", 14, 1, 9, 12, true},
		{"in the middle of 12 words: 3 and 4 shingles", 12, 3, 7, 8, false},
		{"at the end", 12, 7, 7, 11, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copied := secret[10 : 10+tc.words]
			resp := sh(join(gen(1, 5), copied, gen(2, 5)))
			var held []string
			if tc.at >= 0 {
				// The phrase among other words: only its own shingle is common.
				held = append(held, join(gen(3, 6), copied[tc.at:tc.at+ShingleWords], gen(4, 6)))
			}
			s := Measure(NewResponse(resp, nil, commonAt(resp, held...)), NewPrompt(sh(join(secret))))
			if s.Shingles != tc.words-ShingleWords+1 || s.Rare != tc.rare || s.Run != tc.run {
				t.Errorf("got %+v, want shingles=%d rare=%d run=%d", s, tc.words-ShingleWords+1, tc.rare, tc.run)
			}
			if s.Strong(incident.DefaultEvidence) != tc.strong {
				t.Errorf("%+v: strong=%v, want %v", s, s.Strong(incident.DefaultEvidence), tc.strong)
			}
		})
	}
}

// TestWinnowGuarantee: two texts sharing a run of MinRunFloor words share a
// fingerprint, wherever the run sits.
func TestWinnowGuarantee(t *testing.T) {
	if MinRunFloor != incident.MinRunWordsFloor {
		t.Fatalf("textmatch.MinRunFloor %d != incident.MinRunWordsFloor %d", MinRunFloor, incident.MinRunWordsFloor)
	}
	for seed := uint64(0); seed < 300; seed++ {
		run := gen(1000+seed, MinRunFloor)
		a := sh(join(gen(seed, int(seed%13)), run, gen(seed+1, 7)))
		b := sh(join(gen(seed+2, int(seed%5)), run, gen(seed+3, int(seed%11))))
		fa, fb := map[uint64]bool{}, false
		for _, p := range Winnow(a, nil) {
			fa[a[p]] = true
		}
		for _, p := range Winnow(b, nil) {
			if fa[b[p]] {
				fb = true
			}
		}
		if !fb {
			t.Fatalf("seed %d: no shared fingerprint for a shared run of %d words", seed, MinRunFloor)
		}
	}
	if got := Winnow([]uint64{5, 3, 9, 3, 7, 8, 1}, nil); !slices.Equal(got, []int32{3, 6}) {
		t.Errorf("winnow = %v, want [3 6] (rightmost minimum)", got)
	}
}
