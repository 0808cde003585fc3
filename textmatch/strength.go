// Package textmatch is leakmap's one definition of a content match between a
// logged response and a logged prompt: word shingles (shingle.go), the
// winnowed fingerprints kept of every logged text in the case database
// (index.go), and the strength of a match (this file), which both the
// analysis (the confirmed tier) and the sweep use.
//
// Strength of a match between a response and a prompt:
//   - shingles: distinct shingles the two texts share;
//   - rare: those of them that carry weight. A shared shingle carries no
//     weight when the response's own prompt holds it (an answer quoting its
//     question proves nothing), or when it lies in text that the prompts of
//     at least CommonTenants distinct tenants of the model hold (a template,
//     a system prompt, boilerplate, a common phrase);
//   - run: the longest run of words the two texts share, made of shingles
//     that carry weight (a run of n consecutive shingles is n+4 words).
//
// A match is strong when rare >= MinShingles and run >= MinRunWords; only a
// strong match makes an exposure confirmed, or a sweep row.
//
// Which prompts are candidates is found on fingerprints: each text keeps
// the rightmost smallest shingle hash of every window of WinnowWindow
// consecutive shingles (winnowing, Schleimer et al. 2003). Two texts that
// share a run of at least WinnowWindow+ShingleWords-1 words share a
// fingerprint, and MinRunWords is never below that span, so every strong
// match shares a fingerprint that carries weight: the candidates are found
// by a join on fingerprints, never by comparing all pairs.
//
// How many tenants hold a shingle is counted exactly, shingle by shingle, on
// every shingle of every logged prompt (read again and shingled: the case
// keeps only fingerprints), for the shingles the candidate pairs share only. A fingerprint's count is a lower
// bound of it (a prompt holding a shingle does not always keep it as a
// fingerprint), so the candidates, chosen with that bound, lose no strong
// match; the weight of each shared shingle is then decided on its exact
// count. An earlier version let a common fingerprint take the weight of
// its neighbours too (the text it might stand for); with thousands of
// tenants, one common phrase inside a copied run then erased the run
// (docs/evidence.md).
package textmatch

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/leakmap/leakmap/incident"
)

// WinnowWindow is the winnowing window, in shingles.
const WinnowWindow = 4

// MinRunFloor is the smallest MinRunWords allowed: a shared run this long
// always holds a common fingerprint of both texts.
const MinRunFloor = WinnowWindow + ShingleWords - 1

// Thresholds are the incident file's contamination.evidence settings
// (defaults: incident.DefaultEvidence, chosen in docs/evidence.md).
type Thresholds = incident.Evidence

// Strength is how strongly a response matches a prompt.
type Strength struct {
	Shingles int // distinct shared shingles
	Run      int // longest shared run of words that carry weight
	Rare     int // distinct shared shingles that carry weight
}

// Strong reports whether s clears the thresholds.
func (s Strength) Strong(t Thresholds) bool {
	return s.Rare >= t.MinShingles && s.Run >= t.MinRunWords
}

// Winnow appends to dst the positions of sh's fingerprints: the rightmost
// minimum of every window of WinnowWindow consecutive hashes, each position
// once; a text shorter than a window keeps its minimum.
func Winnow(sh []uint64, dst []int32) []int32 {
	if len(sh) == 0 {
		return dst
	}
	w := min(WinnowWindow, len(sh))
	last := int32(-1)
	for start := 0; start+w <= len(sh); start++ {
		best := start
		for j := start + 1; j < start+w; j++ {
			if sh[j] <= sh[best] {
				best = j
			}
		}
		if int32(best) != last {
			dst = append(dst, int32(best))
			last = int32(best)
		}
	}
	return dst
}

// Prompt is a prompt's shingles, indexed for Measure: the hashes sorted,
// each with its position (ascending among equal hashes). Two flat slices
// (12 bytes a shingle) instead of a map of slices (~80): the content match
// holds one for every candidate source and every candidate response's own
// prompt of a chunk.
type Prompt struct {
	hash []uint64
	pos  []int32
}

// NewPrompt indexes the shingle hashes of a prompt (in text order).
func NewPrompt(sh []uint64) *Prompt {
	idx := make([]int32, len(sh))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		return cmp.Or(cmp.Compare(sh[a], sh[b]), cmp.Compare(a, b))
	})
	p := &Prompt{hash: make([]uint64, len(sh)), pos: idx}
	for i, j := range idx {
		p.hash[i] = sh[j]
	}
	return p
}

// at returns the positions of the shingle h in the prompt, ascending.
func (p *Prompt) at(h uint64) []int32 {
	i, ok := slices.BinarySearch(p.hash, h)
	if !ok {
		return nil
	}
	j := i + 1
	for j < len(p.hash) && p.hash[j] == h {
		j++
	}
	return p.pos[i:j]
}

// Has reports whether the prompt holds the shingle h.
func (p *Prompt) Has(h uint64) bool { _, ok := slices.BinarySearch(p.hash, h); return ok }

// Response is a response's shingles with what takes their weight away:
// its own prompt and the shingles that too many tenants' prompts hold.
type Response struct {
	sh     []uint64
	own    *Prompt
	common map[uint64]bool
}

// NewResponse builds a Response; own may be nil (no logged prompt), common
// holds the hashes of the shingles the prompts of at least CommonTenants
// tenants of the response's model hold (nil: none).
func NewResponse(sh []uint64, own *Prompt, common map[uint64]bool) *Response {
	return &Response{sh: sh, own: own, common: common}
}

// Shared appends to dst the shingles r shares with p that its own prompt
// does not hold: those whose weight depends on how many tenants hold them.
func (r *Response) Shared(p *Prompt, dst []uint64) []uint64 {
	for _, h := range r.sh {
		if p.Has(h) && (r.own == nil || !r.own.Has(h)) {
			dst = append(dst, h)
		}
	}
	return dst
}

// Measure computes the strength of the match between r and p.
func Measure(r *Response, p *Prompt) Strength {
	n := len(r.sh)
	shared := make([]bool, n)
	found := false
	for i, h := range r.sh {
		if p.Has(h) {
			shared[i], found = true, true
		}
	}
	if !found {
		return Strength{}
	}
	// weight[i]: a shared shingle that carries weight, each on its own
	// count (DESIGN: a shingle the prompts of common_tenants tenants hold).
	weight := make([]bool, n)
	for i, h := range r.sh {
		weight[i] = shared[i] && (r.own == nil || !r.own.Has(h)) && !r.common[h]
	}
	var s Strength
	all, rare := map[uint64]bool{}, map[uint64]bool{}
	for i, h := range r.sh {
		if shared[i] {
			all[h] = true
			if weight[i] {
				rare[h] = true
			}
		}
	}
	s.Shingles, s.Rare = len(all), len(rare)
	// The longest aligned run of weighted shingles: response positions
	// i..i+m-1 equal to prompt positions j..j+m-1.
	prev, cur := map[int32]int{}, map[int32]int{}
	best := 0
	for i, h := range r.sh {
		clear(cur)
		if weight[i] {
			for _, j := range p.at(h) {
				l := prev[j-1] + 1
				cur[j] = l
				best = max(best, l)
			}
		}
		prev, cur = cur, prev
	}
	if best > 0 {
		s.Run = best + ShingleWords - 1
	}
	return s
}

// Evidence is the strength as the evidence column writes it.
func (s Strength) Evidence() string {
	return fmt.Sprintf("shingles=%d run=%d rare=%d", s.Shingles, s.Run, s.Rare)
}
