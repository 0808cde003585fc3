package notify

import (
	"runtime/debug"
	"runtime/metrics"
)

// gcHeadroom is how far the heap may grow above its live data before the
// collector runs, once that data is large (a variable for the test).
var gcHeadroom uint64 = 1 << 30

// boundGCHeadroom lowers the collector's target while a large manifest is
// held: Go's default lets the heap grow to twice its live data, and a
// case's isolation manifest is millions of shingles (3.4 GB of live heap
// at 10M requests), so the heap doubled past it while the notices were
// drafted. Above gcHeadroom of live data the heap grows by about
// gcHeadroom instead (at 10M: 8,718 -> 7,425 MiB at the peak, in the same time;
// docs/performance.md, "Session 24"); below it, nothing changes. It
// returns the function that puts the setting back. The setting is the
// process's: the commands run one draft or check at a time.
func boundGCHeadroom() (restore func()) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return func() {}
	}
	live := s[0].Value.Uint64()
	if live <= gcHeadroom {
		return func() {}
	}
	old := debug.SetGCPercent(max(25, int(100*gcHeadroom/live)))
	return func() { debug.SetGCPercent(old) }
}
