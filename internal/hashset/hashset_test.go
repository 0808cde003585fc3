package hashset

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStamped: the set keeps each hash's first place, as a map would,
// over texts of every size (growing the table) and many resets (the stamps
// wrapping around).
func TestStamped(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var d Stamped
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
		d.Reset(len(sh))
		for _, h := range sh {
			if d.Add(h) {
				got = append(got, h)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("text %d (%d shingles): %d distinct, want %d", text, n, len(got), len(want))
		}
	}
}
