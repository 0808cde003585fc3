package simulate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/incident"
)

// TestJudge: the truth's proven column follows DESIGN.md's rule for
// confirmed on the texts themselves: a copied run is proof unless shingles
// that the prompts of common_tenants tenants hold (or the response's own
// prompt holds) leave it no run of min_run_words words.
func TestJudge(t *testing.T) {
	ws := func(tag string, n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("%s%d", tag, i)
		}
		return w
	}
	cat := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	secret := ws("sec", 40)
	for _, tc := range []struct {
		name    string
		copied  []string
		holders int  // other tenants whose prompts hold copied[3:8]
		ownHas  bool // the response's own prompt holds copied[3:8]
		proven  bool
	}{
		{"a copy of 12 words", secret[10:22], 0, false, true},
		{"its 4th shingle in 2 tenants' prompts (the source's and one)", secret[10:22], 1, false, true},
		{"its 4th shingle in 3 tenants' prompts: 8 words left", secret[10:22], 2, false, false},
		{"the same, 16 words: 12 words left after it", secret[10:26], 2, false, true},
		{"its 4th shingle in the response's own prompt", secret[10:22], 0, true, false},
		{"9 words", secret[10:19], 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			texts := [][]string{secret, ws("ask", 20)} // 0: the source, 1: the response's own prompt
			if tc.ownHas {
				texts[1] = cat(texts[1], tc.copied[3:8])
			}
			prompts := []loggedPrompt{{seed: 0, tenant: 1}, {seed: 1, tenant: 2}}
			for i := 0; i < tc.holders; i++ {
				texts = append(texts, cat(ws(fmt.Sprintf("a%d_", i), 4), tc.copied[3:8], ws(fmt.Sprintf("b%d_", i), 4)))
				prompts = append(prompts, loggedPrompt{seed: uint64(len(texts) - 1), tenant: int32(10 + i)})
				// The same tenant again and another model change nothing.
				prompts = append(prompts, loggedPrompt{seed: uint64(len(texts) - 1), tenant: int32(10 + i)},
					loggedPrompt{seed: uint64(len(texts) - 1), tenant: 99, model: 1})
			}
			c := &plantedCopy{resp: strings.Join(cat(ws("x", 4), tc.copied, ws("y", 3)), " "),
				own: prompts[1], src: prompts[0]}
			pr := proofs{prompts: prompts, copies: []*plantedCopy{c}}
			pr.judge(incident.DefaultEvidence, func(p loggedPrompt) []string { return texts[p.seed] })
			if c.proven != tc.proven {
				t.Errorf("proven %v, want %v", c.proven, tc.proven)
			}
		})
	}
}
