package analysis

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestReleaseMerge: the releases releaseMerge puts between the allocations
// must give exactly the event stream of DESIGN.md's order, the one the
// query gave when it sorted both kinds (instanceEvents): time, releases
// before allocations, releases at one time by request_id then row_id.
// Times and end times tie often, request_ids repeat and are not in row
// order, some rows end when they start, some last the whole log.
func TestReleaseMerge(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(400)
		type row struct {
			replayRow
			id string
		}
		rows := make([]row, n)
		ts := int64(0)
		for i := range rows {
			ts += int64(rng.IntN(3)) // often equal
			end := ts + int64(rng.IntN(6))
			if rng.IntN(20) == 0 {
				end = ts + 1000
			}
			rows[i] = row{replayRow{ts: ts, end: end, slots: int64(i), overwrite: -1, rowID: int64(rng.IntN(3*n)) + 1},
				fmt.Sprintf("%c%d", 'a'+rng.IntN(4), rng.IntN(3))}
		}
		// Allocation order: ts, request_id, row_id (row_ids made distinct).
		slices.SortFunc(rows, func(a, b row) int {
			return cmp.Or(cmp.Compare(a.ts, b.ts), strings.Compare(a.id, b.id), cmp.Compare(a.rowID, b.rowID))
		})
		rows = slices.CompactFunc(rows, func(a, b row) bool { return a.rowID == b.rowID })
		var in instanceReplay
		for _, r := range rows {
			in.rows = append(in.rows, r.replayRow)
		}
		for k := range in.rows {
			in.relOrder = append(in.relOrder, int32(k))
		}
		slices.SortFunc(in.relOrder, func(a, b int32) int {
			ra, rb := rows[a], rows[b]
			return cmp.Or(cmp.Compare(ra.end, rb.end), strings.Compare(ra.id, rb.id), cmp.Compare(ra.rowID, rb.rowID))
		})
		want := instanceEvents(in)

		var got []replayEvent
		event := func(e replayEvent) error { got = append(got, e); return nil }
		var m releaseMerge
		for _, r := range rows {
			a := replayAlloc{ts: r.ts, end: r.end, slots: r.slots, overwrite: r.overwrite, rowID: r.rowID, requestID: r.id}
			if err := m.alloc(event, a); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.finish(event); err != nil {
			t.Fatal(err)
		}
		if len(m.heap) != 0 {
			t.Fatalf("seed %d: %d releases left in the heap", seed, len(m.heap))
		}
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("seed %d: event %d is %+v, want %+v (%d events, want %d)", seed, i, got[i], want[i], len(got), len(want))
				}
			}
			t.Fatalf("seed %d: %d events, want %d", seed, len(got), len(want))
		}
	}
}
