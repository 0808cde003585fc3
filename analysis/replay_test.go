package analysis

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// refReplay is the replay of DESIGN.md taken literally, slot by slot: an
// owner per slot and lists of slot indices. Slow, but too simple to share a
// bug with replayOne's runs.
func refReplay(in instanceReplay, policy string) replayResult {
	var res replayResult
	pool := in.pool
	for _, g := range in.growth {
		pool = max(pool, g.pool)
	}
	owner := make([]int32, pool)
	for s := range owner {
		owner[s] = unknownOwner
	}
	var free, released []int
	for s := range int(in.pool) {
		free = append(free, s)
	}
	size := in.pool
	held := make([][]int, len(in.rows))

	release := func(i int) {
		switch policy {
		case "fifo":
			free = append(free, held[i]...)
		case "lifo":
			free = append(slices.Clone(held[i]), free...)
		default:
			released = append(released, held[i]...)
		}
		held[i] = nil
	}
	allocate := func(i int) {
		row := in.rows[i]
		if row.slots <= 0 {
			return
		}
		if policy == "sorted" && int64(len(free)) < row.slots && len(released) > 0 {
			free = append(free, released...)
			released = nil
			slices.Sort(free)
		}
		k := min(int(row.slots), len(free))
		if int64(k) < row.slots {
			res.warnings++
		}
		held[i], free = slices.Clone(free[:k]), free[k:]
		if row.overwrite < 0 {
			for _, s := range held[i] {
				owner[s] = int32(i)
			}
			return
		}
		ts := triggerSlots{rowID: row.rowID}
		bySource := map[int64]int64{}
		for j, s := range held[i] {
			switch {
			case int64(j) < row.overwrite:
				owner[s] = int32(i)
			case owner[s] == unknownOwner:
				ts.unknown++
			default:
				bySource[in.rows[owner[s]].rowID]++
			}
		}
		for id, n := range bySource {
			ts.sources = append(ts.sources, sourceSlots{id, n})
		}
		slices.SortFunc(ts.sources, func(a, b sourceSlots) int { return cmp.Compare(a.rowID, b.rowID) })
		res.triggers = append(res.triggers, ts)
	}

	// Every event with its time, kind (growth, release, allocation: the
	// order at equal times) and place in its stream.
	type event struct {
		t          int64
		kind, what int
	}
	var events []event
	for k, g := range in.growth {
		events = append(events, event{g.at, 0, k})
	}
	for k, i := range in.relOrder {
		events = append(events, event{in.rows[i].end, 1, k})
	}
	for i, row := range in.rows {
		events = append(events, event{row.ts, 2, i})
	}
	slices.SortStableFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return a.kind - b.kind
	})
	done := make([]bool, len(in.rows))
	late := make([]bool, len(in.rows)) // released at its own ts: after its allocation
	for _, e := range events {
		switch e.kind {
		case 0:
			p := in.growth[e.what].pool
			if p < size {
				res.shrinks++
				continue
			}
			for s := size; s < p; s++ {
				free = append(free, int(s))
			}
			size = p
		case 1:
			if i := int(in.relOrder[e.what]); done[i] {
				release(i)
			} else {
				late[i] = true
			}
		case 2:
			allocate(e.what)
			done[e.what] = true
			if late[e.what] {
				release(e.what)
			}
		}
	}
	return res
}

// randomInstance is n requests on a small pool: sizes up to the whole pool
// (shortages), many triggers, equal times (including end == ts), growth and
// shrinks in the capacity timeline.
func randomInstance(rng *rand.Rand, n int, pool int64) instanceReplay {
	in := instanceReplay{pool: pool}
	ts := int64(0)
	ids := rng.Perm(n) // row_ids need not follow allocation order
	for i := range n {
		ts += int64(rng.IntN(3)) // often equal
		row := replayRow{ts: ts, end: ts + int64(rng.IntN(12)), rowID: int64(1000 + ids[i]), overwrite: -1}
		switch rng.IntN(10) {
		case 0:
			row.slots = 0
		case 1, 2:
			row.slots = 1 + rng.Int64N(pool)
		default:
			row.slots = 1 + rng.Int64N(pool/8)
		}
		if rng.IntN(3) == 0 {
			row.overwrite = 1 + rng.Int64N(row.slots+1)
		}
		in.rows = append(in.rows, row)
	}
	for at, p := int64(rng.IntN(20)), pool; at < ts; at += 1 + int64(rng.IntN(60)) {
		p += int64(rng.IntN(40)) - 8 // mostly growth, sometimes a shrink
		in.growth = append(in.growth, poolGrowth{at: at, pool: p})
	}
	in.relOrder = make([]int32, n)
	for i := range in.relOrder {
		in.relOrder[i] = int32(i)
	}
	rng.Shuffle(n, func(a, b int) { in.relOrder[a], in.relOrder[b] = in.relOrder[b], in.relOrder[a] })
	slices.SortStableFunc(in.relOrder, func(a, b int32) int { return cmp.Compare(in.rows[a].end, in.rows[b].end) })
	return in
}

// TestReplayMatchesSlotBySlot runs random instances through replayOne and
// refReplay, which must agree on every trigger, warning and shrink.
func TestReplayMatchesSlotBySlot(t *testing.T) {
	tests := []struct {
		rows      int
		pool      int64
		instances int
	}{
		{rows: 5, pool: 8, instances: 400},
		{rows: 60, pool: 40, instances: 300},
		{rows: 400, pool: 300, instances: 100},
		{rows: 3000, pool: 900, instances: 10},
	}
	for _, policy := range []string{"sorted", "fifo", "lifo"} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%d-rows/%d-slots", policy, tc.rows, tc.pool), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(tc.rows), uint64(tc.pool)))
				triggers := 0
				for k := range tc.instances {
					in := randomInstance(rng, tc.rows, tc.pool)
					got, want := replayOne(in, policy), refReplay(in, policy)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("instance %d: replayOne =\n%+v\nwant\n%+v", k, got, want)
					}
					triggers += len(got.triggers)
				}
				if triggers == 0 {
					t.Fatal("no triggers: the test compares nothing")
				}
			})
		}
	}
}

// TestReplayMemoryFollowsLiveSlots: over a long log on a small pool, the
// rows the replay keeps (owners of slots, holders) never outnumber the
// pool's slots, whatever the number of rows, while the results still equal
// the slot-by-slot replay's.
func TestReplayMemoryFollowsLiveSlots(t *testing.T) {
	const pool = 64
	for _, policy := range []string{"sorted", "fifo", "lifo"} {
		t.Run(policy, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 64))
			in := randomInstance(rng, 20000, pool)
			in.growth = nil // a fixed pool: the bound is its size
			got, maxLive := replayOneLive(in, policy)
			if want := refReplay(in, policy); !reflect.DeepEqual(got, want) {
				t.Fatalf("replay differs from the slot-by-slot one")
			}
			if maxLive > pool {
				t.Errorf("%d rows kept at once, more than the pool's %d slots", maxLive, pool)
			}
			if maxLive < 2 {
				t.Errorf("at most %d row kept: the test measures nothing", maxLive)
			}
		})
	}
}
