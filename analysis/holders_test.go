package analysis

import (
	"math/rand/v2"
	"testing"
)

// TestHolderTable runs random puts, gets and deletes (keys crowded into a
// few cells, so that probing and the backward shift are exercised) against
// a Go map.
func TestHolderTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h holderTable
	want := map[int64]int32{}
	for step := range 200000 {
		k := rng.Int64N(3000) - 100 // negative and zero keys too
		if rng.IntN(2) == 0 {
			k *= 1 << 32 // same low bits: the same home cells
		}
		switch rng.IntN(3) {
		case 0:
			if _, ok := want[k]; !ok {
				id := rng.Int32N(1 << 20)
				h.put(k, id)
				want[k] = id
			}
		case 1:
			id, ok := h.del(k)
			wid, wok := want[k]
			if ok != wok || id != wid {
				t.Fatalf("step %d: del(%d) = %d %v, want %d %v", step, k, id, ok, wid, wok)
			}
			delete(want, k)
		default:
			id, ok := h.get(k)
			wid, wok := want[k]
			if ok != wok || id != wid {
				t.Fatalf("step %d: get(%d) = %d %v, want %d %v", step, k, id, ok, wid, wok)
			}
		}
		if h.n != len(want) {
			t.Fatalf("step %d: %d keys, want %d", step, h.n, len(want))
		}
	}
	if len(h.keys) > 4*8192 {
		t.Errorf("%d cells for at most ~6000 keys: deletes do not free cells", len(h.keys))
	}
}
