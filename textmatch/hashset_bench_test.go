package textmatch

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkHashSetMiss: looking up shingles that are not in the set (most
// of a prompt's), in sets of the shared shingles of 10M and 100M requests.
func BenchmarkHashSetMiss(b *testing.B) {
	for _, n := range []int{700_000, 7_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := newHashSet(n)
			for i := 0; i < n; i++ {
				s.add(rng.Uint64())
			}
			probe := make([]uint64, 1<<16)
			for i := range probe {
				probe[i] = rng.Uint64()
			}
			b.ResetTimer()
			hits := 0
			for i := 0; i < b.N; i++ {
				if s.has(probe[i&(len(probe)-1)]) {
					hits++
				}
			}
			_ = hits
		})
	}
}
