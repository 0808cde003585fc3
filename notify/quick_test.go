package notify

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A Bloom filter never turns away a hash it was given, small values and 0
// too, and at its size of 16 bits a hash turns away all but a few others.
func TestBloomHoldsWhatItWasGiven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 1000, 200_000} {
		b := newBloom(int64(n))
		held := map[uint64]bool{}
		for i := range n {
			h := r.Uint64()
			if i%1000 == 0 {
				h = uint64(i) // small values too
			}
			b.add(h)
			held[h] = true
		}
		for x := range held {
			if !b.mayHave(x) {
				t.Fatalf("n=%d: %x added but turned away", n, x)
			}
		}
		wrong := 0
		for range 100_000 {
			if h := r.Uint64(); !held[h] && b.mayHave(h) {
				wrong++
			}
		}
		if wrong > 1000 { // 1%
			t.Errorf("n=%d: %d of 100,000 hashes never added may be held", n, wrong)
		}
	}
}

// The negative cache remembers what it was given, and 0 is its empty
// slot, never a remembered hash.
func TestNegCacheRemembers(t *testing.T) {
	var nc negCache
	h := uint64(0xfeedface)
	if nc.known(h) {
		t.Fatal("known before anything was remembered")
	}
	nc.add(h)
	if !nc.known(h) {
		t.Fatal("not remembered")
	}
	if nc.known(0) {
		t.Fatal("0 is the empty slot, never a remembered hash")
	}
	if nc.known(h + negCacheSlots) {
		t.Fatal("another hash of the same slot taken for the one remembered")
	}
}

// Another tenant's identifier split over lines is found by the quick
// check, which finds the k-grams leaving a line once per run of lines
// (crossCache), as by the digest check: over two lines, over three and more
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

// A texts file's quick filter, filled on a goroutine of its own in
// batches, holds every shingle's cheap hash: none, less than a batch, and
// several batches with a part of one left.
func TestTextsQuickFilterHoldsEveryShingle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 17, 3*bloomBatch + 17} {
		var b textBuilder
		var qs []uint64
		for range n {
			e := textEntry{r.Uint64(), r.Uint64(), r.Uint64()}
			b.addEntry(e)
			qs = append(qs, e.q)
		}
		ts, err := b.finish("")
		if err != nil {
			t.Fatal(err)
		}
		if ts.n != int64(n) {
			t.Fatalf("n=%d: %d shingles", n, ts.n)
		}
		for i, q := range qs {
			if !ts.quick.mayHave(q) {
				t.Fatalf("n=%d: shingle %d's cheap hash turned away", n, i)
			}
		}
	}
}
