package analysis

import (
	"cmp"
	"slices"
)

// The tests describe an instance as rows in allocation order and a release
// order, as DESIGN.md does; replayOne turns them into the event stream the
// query gives (analysis_06_replay_events.sql) and replays it.

// replayRow is one replayable request on one decode instance.
type replayRow struct {
	ts, end   int64 // microseconds since the epoch; end >= ts
	slots     int64 // slots held, already rounded up to whole pages
	overwrite int64 // slots the request writes: -1 means all of them (not a trigger)
	rowID     int64
}

// instanceReplay is one decode instance's rows.
type instanceReplay struct {
	rows     []replayRow // allocation order: ts, request_id byte order, row_id
	relOrder []int32     // release order: indexes into rows by end, request_id, row_id
	pool     int64       // pool size when the log begins
	growth   []poolGrowth
}

// replayResult is the replay of one instance.
type replayResult struct {
	triggers []triggerSlots
	warnings int64
	err      error
	shrinks  int64
}

// instanceEvents merges the allocations (rows order) and releases
// (relOrder) by time, releases first at equal times; a row with end = ts
// has no release event of its own (evAllocFree).
func instanceEvents(in instanceReplay) []replayEvent {
	var ev []replayEvent
	for _, r := range in.rows {
		k := evAlloc
		if r.end == r.ts {
			k = evAllocFree
		}
		ev = append(ev, replayEvent{t: r.ts, slots: r.slots, overwrite: r.overwrite, rowID: r.rowID, kind: k})
	}
	for _, i := range in.relOrder {
		if r := in.rows[i]; r.end != r.ts {
			ev = append(ev, replayEvent{t: r.end, rowID: r.rowID, kind: evRelease})
		}
	}
	// Stable: each kind keeps its own order at equal times.
	slices.SortStableFunc(ev, func(a, b replayEvent) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(min(a.kind, evAlloc), min(b.kind, evAlloc))
	})
	return ev
}

// replayOne replays in under policy; maxLive is the most rows that owned
// or held slots at once.
func replayOne(in instanceReplay, policy string) replayResult {
	res, _ := replayOneLive(in, policy)
	return res
}

func replayOneLive(in instanceReplay, policy string) (res replayResult, maxLive int) {
	r, err := newReplayer(policy, in.pool, in.growth, func(t triggerSlots) { res.triggers = append(res.triggers, t) })
	if err != nil {
		res.err = err
		return res, 0
	}
	for _, e := range instanceEvents(in) {
		if err := r.event(e); err != nil {
			res.err = err
			return res, maxLive
		}
		maxLive = max(maxLive, r.pool.live())
	}
	res.warnings, res.shrinks = r.warnings, r.shrinks
	return res, maxLive
}
