package notify

import (
	"math/rand/v2"
	"slices"
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

// Another tenant's identifier split over lines is found by the quick
// check, which finds the k-grams spanning two lines once per pair of lines
// (pairCache), as by the digest check: over two lines, over three and more
// (a line shorter than the identifier), across empty lines, at the start
// and the end of a segment, and again in later notices whose lines the
// caches already hold.
func TestQuickCheckFindsIdentifiersAcrossLines(t *testing.T) {
	m := newManifest()
	x := newHasher()
	m.addIdentifier(x, "t-other", "tenant_name", "Zyx Quorra Vell Tamsin Orbit Lake")
	m.addIdentifier(x, "t-other", "email", "ops@quorra.example")
	m.addIdentifier(x, "t-self", "tenant_name", "Plain Owner Name")
	cases := []struct {
		text string
		hit  bool
	}{
		{"Dear customer,\nZyx Quorra Vell\nTamsin Orbit Lake\nregards", true},       // two lines
		{"Dear customer,\nZyx Quorra\nVell\nTamsin\nOrbit Lake\nregards", true},     // five lines
		{"Dear customer, Zyx\n\n\nQuorra Vell Tamsin Orbit\n\nLake, regards", true}, // empty lines between
		{"Zyx\nQuorra Vell Tamsin Orbit Lake", true},                                // the segment's start
		{"see Zyx Quorra Vell Tamsin Orbit\nLake", true},                            // its end
		{"write to ops@\nquorra.example today", true},
		{"Dear customer,\nZyx Quorra Vell\nTamsin Orbit Pond\nregards", false},
		{"Dear customer,\nPlain Owner\nName\nregards", false}, // the owner's own
	}
	quick, digest := newCheckerQuick(m, true), newCheckerQuick(m, false)
	if !quick.quick || digest.quick {
		t.Fatal("the two checkers must differ in the quick set")
	}
	for round := range 3 { // later rounds: the lines and pairs are cached
		for _, tc := range cases {
			segs := []segment{{"text/plain part", tc.text, segProse}, {"text/html part", "intro\n" + tc.text + "\nend", segProse}}
			got := quick.segmentReasons(segs, ownerKey("t-self"), numberSet{})
			want := digest.segmentReasons(segs, ownerKey("t-self"), numberSet{})
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %q: quick %q, digest %q", round, tc.text, got, want)
			}
			if (len(got) > 0) != tc.hit {
				t.Errorf("round %d, %q: reasons %q, want a hit: %v", round, tc.text, got, tc.hit)
			}
		}
	}
}
