package analysis

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// synthInstance is one decode instance's day: a request a second lasting
// 2-22 s, 0.02-5.6k slots, 1% of 0.6-1M slots (half of them triggers), on a
// 3.2M-slot pool. Under fifo and lifo its free slot indices fragment into
// ~200k ranges, which the replay no longer keeps there (owners only).
func synthInstance(n int, seed uint64) instanceReplay {
	rng := rand.New(rand.NewPCG(seed, 1))
	in := instanceReplay{pool: 3200000}
	for i := 0; i < n; i++ {
		ts := int64(i) * 1_040_000
		slots := int64(16 + rng.IntN(5000) + 1 + rng.IntN(600))
		ow := int64(-1)
		if rng.IntN(1000) < 10 {
			slots = int64(600000 + rng.IntN(460000))
			if rng.IntN(2) == 0 {
				ow = 1 + int64(rng.IntN(600))
			}
		}
		in.rows = append(in.rows, replayRow{ts: ts, end: ts + 2_000_000 + int64(rng.IntN(20_000_000)),
			slots: slots, overwrite: ow, rowID: int64(i)})
	}
	in.relOrder = make([]int32, n)
	for i := range in.relOrder {
		in.relOrder[i] = int32(i)
	}
	slices.SortStableFunc(in.relOrder, func(a, b int32) int { return cmp.Compare(in.rows[a].end, in.rows[b].end) })
	return in
}

// BenchmarkReplay reports the replay's throughput (requests/s) per policy,
// without the database: go test -tags duckdb_arrow -bench Replay ./analysis
func BenchmarkReplay(b *testing.B) {
	in := synthInstance(100000, 1)
	events := instanceEvents(in)
	for _, policy := range []string{"sorted", "fifo", "lifo"} {
		b.Run(policy, func(b *testing.B) {
			for b.Loop() {
				r, err := newReplayer(policy, in.pool, in.growth, func(triggerSlots) {})
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range events {
					if err := r.event(e); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(in.rows)*b.N)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
