package notify

import (
	"math/rand/v2"
	"testing"
)

// The quick set (and its Bloom filter) never turns away a hash it holds,
// through every growth of its table, and turns away most others.
func TestQuickSetHoldsWhatItWasGiven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := newQuickSet()
	held := map[uint64]bool{0: true}
	q.add(0)
	for i := 0; i < 200_000; i++ {
		h := r.Uint64()
		if i%1000 == 0 {
			h = uint64(i) // small values too
		}
		q.add(h)
		held[h] = true
		if i%9973 == 0 {
			for x := range held {
				if !q.has(x) {
					t.Fatalf("after %d adds: %x added but not found", i, x)
				}
			}
		}
	}
	for x := range held {
		if !q.has(x) {
			t.Fatalf("%x added but not found", x)
		}
	}
	if q.n != len(held) {
		t.Errorf("n = %d, want %d", q.n, len(held))
	}
	wrong := 0
	for i := 0; i < 100_000; i++ {
		if h := r.Uint64(); !held[h] && q.has(h) {
			wrong++
		}
	}
	if wrong != 0 {
		t.Errorf("%d hashes never added are found", wrong)
	}
}

// A hash the negative cache remembers as absent is forgotten as soon as
// the quick set grows: the cache never hides an entry added later.
func TestNegCacheForgetsWhenTheSetGrows(t *testing.T) {
	q := newQuickSet()
	q.add(11)
	var nc negCache
	h := uint64(0xfeedface)
	if nc.known(q, h) || q.has(h) {
		t.Fatal("known before anything was remembered")
	}
	nc.add(h)
	if !nc.known(q, h) {
		t.Fatal("not remembered")
	}
	q.add(h)
	if nc.known(q, h) {
		t.Fatal("still remembered as absent after the set gained it")
	}
	if nc.known(q, 0) {
		t.Fatal("0 is the empty slot, never a remembered hash")
	}
}
