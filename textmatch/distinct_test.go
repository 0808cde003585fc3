package textmatch

import (
	"math/rand/v2"
	"testing"
)

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
