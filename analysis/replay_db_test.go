package analysis

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReplayThroughDatabase: random logs on three decode instances (equal
// times, end_ts = ts, request_ids whose byte order is not the row order,
// shortages, a pool that grows and one that would shrink) go through the
// case database and the whole analysis; every trigger's unknown slots and
// every replay pair (exposures' slots=) must equal the slot-by-slot replay
// of the same rows in DESIGN.md's order. This pins the query's event order
// (analysis_06_replay_events.sql, with the reader's order among rows of
// one time), which the Go tests take as given. It runs with the reader's
// chunks as they are and with chunks of 3 rows, cut between times.
func TestReplayThroughDatabase(t *testing.T) {
	for _, chunk := range []int{eventChunk, 3} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			defer func(n int) { eventChunk = n }(eventChunk)
			eventChunk = chunk
			testReplayThroughDatabase(t)
		})
	}
}

func testReplayThroughDatabase(t *testing.T) {
	const prefill, decode = 40, 100
	timeline := "d2,decode,130,2026-09-01T10:01:00Z\nd3,decode,90,2026-09-01T10:02:00Z\n"
	growth := map[string][]poolGrowth{
		"d2": {{at: base.Add(60e9).UnixMicro(), pool: 130}},
		"d3": {{at: base.Add(120e9).UnixMicro(), pool: 90}},
	}
	for _, policy := range []string{"sorted", "fifo", "lifo"} {
		t.Run(policy, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(14, uint64(len(policy))))
			var rows []req
			sec := 0
			for i := range 300 {
				sec += rng.IntN(2) // often equal
				r := req{id: fmt.Sprintf("%c%03d", 'a'+rng.IntN(26), i), ts: float64(sec),
					end: float64(sec + rng.IntN(8)), tenant: fmt.Sprintf("t%d", rng.IntN(5)),
					prompt: 1 + rng.Int64N(80), completion: rng.Int64N(15),
					decode: []string{"d1", "d2", "d3"}[rng.IntN(3)]}
				rows = append(rows, r)
			}
			db := newCase(t, rows)
			cont := fmt.Sprintf("  allocator: %s\n  page_size: 1", policy)
			sum := runCase(t, db, testIncident(t, prefill, decode, cont, timeline))

			// The same rows, replayed here.
			var want []string
			var warnings, shrinks int64
			for _, inst := range []string{"d1", "d2", "d3"} {
				var idx []int
				for i, r := range rows {
					if r.decode == inst {
						idx = append(idx, i)
					}
				}
				us := func(s float64) int64 { return base.Add(time.Duration(s * float64(time.Second))).UnixMicro() }
				slices.SortStableFunc(idx, func(a, b int) int {
					return cmp.Or(cmp.Compare(rows[a].ts, rows[b].ts), strings.Compare(rows[a].id, rows[b].id), cmp.Compare(a, b))
				})
				in := instanceReplay{pool: decode, growth: growth[inst]}
				for _, i := range idx {
					r := rows[i]
					ow := int64(-1)
					if r.prompt > prefill {
						ow = 1 + r.completion
					}
					in.rows = append(in.rows, replayRow{ts: us(r.ts), end: us(r.end), slots: r.prompt + r.completion, overwrite: ow, rowID: int64(i + 1)})
				}
				for k := range in.rows {
					in.relOrder = append(in.relOrder, int32(k))
				}
				slices.SortStableFunc(in.relOrder, func(a, b int32) int {
					ra, rb := rows[in.rows[a].rowID-1], rows[in.rows[b].rowID-1]
					return cmp.Or(cmp.Compare(ra.end, rb.end), strings.Compare(ra.id, rb.id), cmp.Compare(a, b))
				})
				res := refReplay(in, policy)
				warnings += res.warnings
				shrinks += res.shrinks
				for _, tr := range res.triggers {
					want = append(want, fmt.Sprintf("%s unknown=%d", rows[tr.rowID-1].id, tr.unknown))
					for _, s := range tr.sources {
						want = append(want, fmt.Sprintf("%s>%s slots=%d", rows[s.rowID-1].id, rows[tr.rowID-1].id, s.slots))
					}
				}
			}

			var got []string
			q, err := db.Query(`SELECT request_id, unknown_slots FROM affected_requests`)
			if err != nil {
				t.Fatal(err)
			}
			for q.Next() {
				var id string
				var unknown int64
				if err := q.Scan(&id, &unknown); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s unknown=%d", id, unknown))
			}
			q.Close()
			for _, l := range compact(exposureLines(t, db, true)) {
				f := strings.Fields(l)
				for _, kv := range f[2:] {
					if strings.HasPrefix(kv, "slots=") {
						got = append(got, f[0]+" "+kv)
					}
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if len(want) < 100 {
				t.Fatalf("only %d trigger and pair lines: the test compares little", len(want))
			}
			equalLines(t, "triggers and replay pairs", got, want)
			if sum.ReplayWarnings != warnings || sum.PoolShrinks != shrinks || warnings == 0 || shrinks == 0 {
				t.Errorf("warnings %d shrinks %d, want %d and %d (both > 0)", sum.ReplayWarnings, sum.PoolShrinks, warnings, shrinks)
			}
		})
	}
}
