package notify

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestBoundGCHeadroom: with more live data than the headroom, the
// collector's target is lowered in proportion (not under 25%) and put
// back after; with less, it is left alone.
func TestBoundGCHeadroom(t *testing.T) {
	defer func(h uint64) { gcHeadroom = h }(gcHeadroom)
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	live := make([][]byte, 64) // 64 MiB held across the GC below
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	for _, tc := range []struct {
		headroom uint64
		want     int
	}{
		{1 << 40, 100}, // far more headroom than live data: unchanged
		{32 << 20, 50}, // half of it
		{1 << 20, 25},  // a sliver: the floor
	} {
		gcHeadroom = tc.headroom
		restore := boundGCHeadroom()
		got := debug.SetGCPercent(100)
		debug.SetGCPercent(got)
		restore()
		after := debug.SetGCPercent(100)
		// 64 MiB and the test binary's own heap: about half at 32 MiB.
		if tc.want == 50 && (got < 35 || got > 50) || tc.want != 50 && got != tc.want || after != 100 {
			t.Errorf("headroom %d: GC percent %d while held (want %d), %d after (want 100)", tc.headroom, got, tc.want, after)
		}
	}
	runtime.KeepAlive(live)
}
