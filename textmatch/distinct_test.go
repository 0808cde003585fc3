package textmatch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDistinct: the set keeps each hash's first place, as a map would,
// over texts of every size (growing the table) and many resets (the stamps
// wrapping around).
func TestDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var d distinct
	d.now = ^uint32(0) - 3 // wraps within the first texts
	for text := 0; text < 2000; text++ {
		n := rng.IntN(300)
		if text%500 == 0 {
			n = 5000
		}
		sh := make([]uint64, n)
		for i := range sh {
			sh[i] = rng.Uint64N(uint64(n/3 + 1)) // many repeats, small values
			if i%7 == 0 {
				sh[i] = rng.Uint64() // and any value
			}
		}
		var want, got []uint64
		seen := map[uint64]bool{}
		for _, h := range sh {
			if !seen[h] {
				seen[h] = true
				want = append(want, h)
			}
		}
		d.reset(len(sh))
		for _, h := range sh {
			if d.add(h) {
				got = append(got, h)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("text %d (%d shingles): %d distinct, want %d", text, n, len(got), len(want))
		}
	}
}

// TestHashSet: the set holds what was added, 0 and small values (which
// collide on the low bits) included, and nothing else.
func TestHashSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 31, 32, 33, 1000, 50000} {
		in := map[uint64]bool{}
		s := newHashSet(n)
		for len(in) < n {
			h := rng.Uint64()
			switch rng.IntN(4) {
			case 0:
				h = rng.Uint64N(64) // 0 among them
			case 1:
				h <<= 40 // low bits 0: one long probe run
			}
			in[h] = true
			s.add(h)
			s.add(h) // twice: still once
		}
		for h := range in {
			if !s.has(h) {
				t.Fatalf("n=%d: %d added, not found", n, h)
			}
		}
		for i := 0; i < 20000; i++ {
			h := rng.Uint64()
			if i%2 == 0 {
				h = rng.Uint64N(64)
			}
			if s.has(h) != in[h] {
				t.Fatalf("n=%d: has(%d) = %v, added %v", n, h, s.has(h), in[h])
			}
		}
	}
}
