package simulate

import (
	"strings"

	"github.com/leakmap/leakmap/incident"
)

// Which planted copies prove a leak, by DESIGN.md's rule for `confirmed`:
// a copy is a leak the tools must confirm only when it is a strong and
// specific match. The simulator plants copies of 12-16 of a source's own
// words, but its words follow a natural (Zipf) profile: a copy can hold a
// common phrase ("of the and to the") that the prompts of several tenants
// hold, and such a shingle carries no weight. With 2,000 tenants that
// happens to about 0.4 % of the copies, and some of them are left with no
// run of min_run_words specific words: a copy, but no proof.
//
// This is the oracle's own reading of the rule, on the texts it generated
// (words split on spaces, 5-word shingles, every prompt of the case), and
// shares no code with package textmatch:
//   - a shared shingle carries no weight when the response's own prompt
//     holds it, or when the prompts of at least common_tenants distinct
//     tenants of the response's model hold it, anywhere in the case;
//   - rare: distinct shared shingles with weight; run: the longest run of
//     consecutive shingles with weight that the response and the source
//     prompt share in the same order, in words (shingles + 4);
//   - proven: rare >= min_shingles and run >= min_run_words (the incident
//     file's defaults: the simulator writes no contamination.evidence).

const shingleLen = 5

// loggedPrompt is what regenerates one logged prompt (promptText).
type loggedPrompt struct {
	seed     uint64
	tenant   int32
	template int8
	model    int8
}

// plantedCopy is one text pair as the truth records it.
type plantedCopy struct {
	respID, srcID, respTenant, srcTenant string
	respModel, srcModel                  int8
	ts                                   int64
	resp                                 string
	own, src                             loggedPrompt // the response's own prompt, the source's
	proven                               bool
}

// proofs collects what the verdicts need while the incident is generated.
type proofs struct {
	prompts []loggedPrompt
	copies  []*plantedCopy
}

// wordHash is FNV-1a over one word.
func wordHash(w string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h ^= uint64(w[i])
		h *= 1099511628211
	}
	return h
}

// shingleHashes returns the hash of every run of shingleLen words, in order.
func shingleHashes(words []string) []uint64 {
	if len(words) < shingleLen {
		return nil
	}
	wh := make([]uint64, len(words))
	for i, w := range words {
		wh[i] = wordHash(w)
	}
	out := make([]uint64, 0, len(words)-shingleLen+1)
	for i := 0; i+shingleLen <= len(words); i++ {
		var h uint64 = 0x811c9dc5
		for _, x := range wh[i : i+shingleLen] {
			h = (h*0x100000001b3 ^ x) * 0x9e3779b97f4a7c15
			h ^= h >> 32
		}
		out = append(out, h)
	}
	return out
}

// promptWords regenerates a logged prompt's words.
func promptWords(p loggedPrompt) []string {
	w := ownWords(p.seed)
	if p.template >= 0 {
		words()
		w = append(append([]string(nil), tmpl[p.template]...), w...)
	}
	return w
}

// judge sets proven on every planted copy; wordsOf regenerates a prompt
// (promptWords; a test gives its own texts).
func (pr *proofs) judge(ev incident.Evidence, wordsOf func(loggedPrompt) []string) {
	type key struct {
		model int8
		h     uint64
	}
	// The shingles whose weight depends on the count: shared with the
	// source, not in the response's own prompt.
	holders := map[key][]int32{}
	type parsed struct {
		resp []uint64
		own  map[uint64]bool
		src  map[uint64][]int
	}
	ps := make([]parsed, len(pr.copies))
	for i, c := range pr.copies {
		p := parsed{resp: shingleHashes(strings.Fields(c.resp)), own: map[uint64]bool{}, src: map[uint64][]int{}}
		for _, h := range shingleHashes(wordsOf(c.own)) {
			p.own[h] = true
		}
		for j, h := range shingleHashes(wordsOf(c.src)) {
			p.src[h] = append(p.src[h], j)
		}
		for _, h := range p.resp {
			if p.src[h] != nil && !p.own[h] {
				holders[key{c.respModel, h}] = nil
			}
		}
		ps[i] = p
	}
	for _, lp := range pr.prompts {
		for _, h := range shingleHashes(wordsOf(lp)) {
			k := key{lp.model, h}
			ts, ok := holders[k]
			if !ok || len(ts) >= ev.CommonTenants {
				continue
			}
			seen := false
			for _, t := range ts {
				seen = seen || t == lp.tenant
			}
			if !seen {
				holders[k] = append(ts, lp.tenant)
			}
		}
	}
	for i, c := range pr.copies {
		p := ps[i]
		weight := make([]bool, len(p.resp))
		rare := map[uint64]bool{}
		for j, h := range p.resp {
			weight[j] = p.src[h] != nil && !p.own[h] && len(holders[key{c.respModel, h}]) < ev.CommonTenants
			if weight[j] {
				rare[h] = true
			}
		}
		// run[j][at]: weighted shingles ending at response j and source at.
		best := 0
		prev := map[int]int{}
		for j, h := range p.resp {
			cur := map[int]int{}
			if weight[j] {
				for _, at := range p.src[h] {
					cur[at] = prev[at-1] + 1
					best = max(best, cur[at])
				}
			}
			prev = cur
		}
		run := 0
		if best > 0 {
			run = best + shingleLen - 1
		}
		c.proven = len(rare) >= ev.MinShingles && run >= ev.MinRunWords
	}
}

// promptOf is what regenerates o's prompt.
func promptOf(o *owner) loggedPrompt {
	return loggedPrompt{seed: o.textSeed, tenant: int32(o.tenant), template: o.template, model: o.model}
}
