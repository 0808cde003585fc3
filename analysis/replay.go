package analysis

import (
	"fmt"
	"slices"

	"github.com/leakmap/leakmap/incident"
)

// This file is the decode-pool replay of DESIGN.md ("The decode pool, as
// replay sees it"). It is pure Go on plain slices so that the worked trace
// and the edge cases can be tested without a database.
//
// Slots are never tracked one by one: prompts reach a million tokens and
// pools millions of slots. Every slot is, at any time, in exactly one of the
// free list, the release list (policy sorted) or a request's held list, and
// it travels there inside a run [s,e) that also carries the slot's owner:
// the last request that wrote it (its index in the instance's rows), or
// unknownOwner when never written since the log began. Ownership therefore needs no separate map: a normal request
// relabels the runs it takes, a trigger relabels only its first
// 1+completion_tokens slots, and the labels of the rest are its sources.

const unknownOwner int32 = -1

// slot is a slot index. 32 bits keep a run at 12 bytes: the fifo and lifo
// free lists hold hundreds of thousands of runs and every allocation moves
// some, so the replay is bound by memory bandwidth. A pool is at most
// maxPool slots (4 billion tokens of KV cache: far beyond any machine).
type slot = uint32

const maxPool = 1<<32 - 1

// slotRun is the slots [s,e), all last written by owner: the index of a
// row of the instance (its allocation order), or unknownOwner.
type slotRun struct {
	s, e  slot
	owner int32
}

func (r slotRun) len() int64 { return int64(r.e - r.s) }

// replayRow is one replayable request on one decode instance.
type replayRow struct {
	ts, end   int64 // microseconds since the epoch; end >= ts
	slots     int64 // slots held, already rounded up to whole pages
	overwrite int64 // slots the request writes: -1 means all of them (not a trigger)
	rowID     int64
}

// poolGrowth makes the pool pool slots large from time at (microseconds).
type poolGrowth struct {
	at   int64
	pool int64
}

// instanceReplay is the input for one decode instance.
type instanceReplay struct {
	rows     []replayRow // allocation order: ts, request_id byte order, row_id
	relOrder []int32     // release order: indexes into rows by end, request_id, row_id
	pool     int64       // pool size when the log begins
	growth   []poolGrowth
}

// triggerSlots is what one trigger got from the replay.
type triggerSlots struct {
	rowID   int64
	unknown int64         // slots it got but did not overwrite, never written before
	sources []sourceSlots // previous owners of slots it did not overwrite, by row_id
}

type sourceSlots struct {
	rowID int64
	slots int64
}

// replayResult is the replay of one instance.
type replayResult struct {
	triggers []triggerSlots
	warnings int64 // allocations larger than the free slots
	err      error
	shrinks  int64 // capacity rows that would shrink the pool (ignored)
}

// runDeque is a double-ended queue of runs in a ring buffer whose size is a
// power of two, with the total number of slots it holds. Under fifo and
// lifo the free list fragments into hundreds of thousands of runs, so this
// is the replay's inner loop.
type runDeque struct {
	buf        []slotRun
	mask       int
	head, n    int
	totalSlots int64
}

func (d *runDeque) grow() {
	nb := make([]slotRun, max(64, 2*len(d.buf)))
	for i := 0; i < d.n; i++ {
		nb[i] = d.buf[(d.head+i)&d.mask]
	}
	d.buf, d.head, d.mask = nb, 0, len(nb)-1
}

func (d *runDeque) at(i int) *slotRun { return &d.buf[(d.head+i)&d.mask] }

func (d *runDeque) pushBack(r slotRun) {
	if r.e <= r.s {
		return
	}
	d.totalSlots += r.len()
	if d.n > 0 { // coalesce: same owner, index-adjacent, adjacent in the list
		if b := &d.buf[(d.head+d.n-1)&d.mask]; b.e == r.s && b.owner == r.owner {
			b.e = r.e
			return
		}
	}
	if d.n == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.n)&d.mask] = r
	d.n++
}

func (d *runDeque) pushFront(r slotRun) {
	if r.e <= r.s {
		return
	}
	d.totalSlots += r.len()
	if d.n > 0 {
		if f := &d.buf[d.head]; r.e == f.s && f.owner == r.owner {
			f.s = r.s
			return
		}
	}
	if d.n == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1) & d.mask
	d.buf[d.head] = r
	d.n++
}

// reserve makes room for k more runs.
func (d *runDeque) reserve(k int) {
	for d.n+k > len(d.buf) {
		d.grow()
	}
}

// pushBackAll appends runs (already coalesced among themselves) in order:
// one or two block copies instead of a push per run.
func (d *runDeque) pushBackAll(runs []slotRun, slots int64) {
	if len(runs) == 0 {
		return
	}
	if d.n > 0 {
		if b := &d.buf[(d.head+d.n-1)&d.mask]; b.e == runs[0].s && b.owner == runs[0].owner {
			b.e = runs[0].e
			d.totalSlots += runs[0].len()
			slots -= runs[0].len()
			runs = runs[1:]
		}
	}
	d.reserve(len(runs))
	d.totalSlots += slots
	tail := (d.head + d.n) & d.mask
	c := copy(d.buf[tail:], runs)
	copy(d.buf, runs[c:])
	d.n += len(runs)
}

// pushFrontAll puts runs (already coalesced among themselves) at the front,
// runs[0] first.
func (d *runDeque) pushFrontAll(runs []slotRun, slots int64) {
	if len(runs) == 0 {
		return
	}
	if d.n > 0 {
		last := runs[len(runs)-1]
		if f := &d.buf[d.head]; last.e == f.s && last.owner == f.owner {
			f.s = last.s
			d.totalSlots += last.len()
			slots -= last.len()
			runs = runs[:len(runs)-1]
		}
	}
	d.reserve(len(runs))
	d.totalSlots += slots
	d.head = (d.head - len(runs)) & d.mask
	c := copy(d.buf[d.head:], runs)
	copy(d.buf, runs[c:])
	d.n += len(runs)
}

// take removes up to n slots from the front, appending them to dst in order
// (relabelled as owner when owner >= 0, coalescing index-adjacent runs). It
// returns dst and how many slots were missing.
func (d *runDeque) take(n int64, owner int32, dst []slotRun) ([]slotRun, int64) {
	for n > 0 && d.n > 0 {
		f := &d.buf[d.head]
		r := *f
		if l := r.len(); l <= n {
			n -= l
			d.totalSlots -= l
			d.head = (d.head + 1) & d.mask
			d.n--
		} else {
			r.e = r.s + slot(n)
			f.s += slot(n)
			d.totalSlots -= n
			n = 0
		}
		if owner >= 0 {
			r.owner = owner
			if k := len(dst) - 1; k >= 0 && dst[k].e == r.s && dst[k].owner == owner {
				dst[k].e = r.e
				continue
			}
		}
		dst = append(dst, r)
	}
	return dst, n
}

// drain empties the deque into dst.
func (d *runDeque) drain(dst []slotRun) []slotRun {
	for i := 0; i < d.n; i++ {
		dst = append(dst, d.buf[(d.head+i)&d.mask])
	}
	d.head, d.n, d.totalSlots = 0, 0, 0
	return dst
}

// appendRun appends r to runs, merging it into the last run when they are
// index-adjacent with the same owner.
func appendRun(runs []slotRun, r slotRun) []slotRun {
	if r.len() <= 0 {
		return runs
	}
	if k := len(runs); k > 0 && runs[k-1].e == r.s && runs[k-1].owner == r.owner {
		runs[k-1].e = r.e
		return runs
	}
	return append(runs, r)
}

// replayOne replays one decode instance under policy (sorted, fifo, lifo).
func replayOne(in instanceReplay, policy string) replayResult {
	var (
		res       replayResult
		free      runDeque
		released  []slotRun // the release list of policy sorted
		held      = make([][]slotRun, len(in.rows))
		heldSlots = make([]int64, len(in.rows))
		taken     []slotRun // scratch
		pool      = in.pool
	)
	for _, g := range in.growth {
		pool = max(pool, g.pool)
	}
	if pool > maxPool {
		res.err = fmt.Errorf("a decode pool of %d slots is beyond the replay's %d", pool, int64(maxPool))
		return res
	}
	pool = in.pool
	free.pushBack(slotRun{0, slot(pool), unknownOwner})

	growTo := func(p int64) {
		if p < pool {
			res.shrinks++ // slots cannot be taken back from their holders: keep them
			return
		}
		free.pushBack(slotRun{slot(pool), slot(p), unknownOwner})
		pool = p
	}
	var spare [][]slotRun // released held lists, reused: no garbage per request
	release := func(i int) {
		runs := held[i]
		held[i] = nil
		if runs == nil {
			return
		}
		switch policy {
		case incident.AllocFIFO:
			free.pushBackAll(runs, heldSlots[i])
		case incident.AllocLIFO: // the first held ends up at the front
			free.pushFrontAll(runs, heldSlots[i])
		default: // sorted
			released = append(released, runs...)
		}
		spare = append(spare, runs[:0]) // every branch copied the runs out
	}
	allocate := func(i int) {
		row := in.rows[i]
		if row.slots <= 0 {
			return
		}
		if policy != incident.AllocFIFO && policy != incident.AllocLIFO && free.totalSlots < row.slots && len(released) > 0 {
			// sorted: merge the release list into the free list, by slot index.
			all := free.drain(released)
			slices.SortFunc(all, func(a, b slotRun) int { return cmpInt64(int64(a.s), int64(b.s)) })
			for _, r := range all {
				free.pushBack(r)
			}
			released = all[:0]
		}
		var mine []slotRun
		if k := len(spare); k > 0 {
			mine, spare = spare[k-1][:0], spare[:k-1]
		}
		var short int64
		if row.overwrite < 0 {
			mine, short = free.take(row.slots, int32(i), mine)
			if short > 0 {
				res.warnings++
			}
			held[i], heldSlots[i] = mine, row.slots-short
			return
		}
		taken, short = free.take(row.slots, -1, taken[:0])
		if short > 0 {
			res.warnings++
		}
		// A trigger: it writes its first overwrite slots; the rest keep
		// their owners, who are its sources and stay their owners.
		ts := triggerSlots{rowID: row.rowID}
		left := row.overwrite
		bySource := map[int32]int64{}
		// Runs of one owner often follow each other: add them up before
		// touching the map.
		lastOwner, lastSlots := unknownOwner, int64(0)
		for _, r := range taken {
			if left > 0 {
				w := min(left, r.len())
				mine = appendRun(mine, slotRun{r.s, r.s + slot(w), int32(i)})
				left -= w
				r.s += slot(w)
				if r.len() == 0 {
					continue
				}
			}
			mine = appendRun(mine, r)
			if r.owner == unknownOwner {
				ts.unknown += r.len()
			} else if r.owner == lastOwner {
				lastSlots += r.len()
			} else {
				if lastSlots > 0 {
					bySource[lastOwner] += lastSlots
				}
				lastOwner, lastSlots = r.owner, r.len()
			}
		}
		if lastSlots > 0 {
			bySource[lastOwner] += lastSlots
		}
		for idx, n := range bySource {
			ts.sources = append(ts.sources, sourceSlots{in.rows[idx].rowID, n})
		}
		slices.SortFunc(ts.sources, func(a, b sourceSlots) int { return cmpInt64(a.rowID, b.rowID) })
		res.triggers = append(res.triggers, ts)
		held[i], heldSlots[i] = mine, row.slots-short
	}

	// Merge the three event streams. At equal times: pool growth, then
	// releases, then allocations; within each, the order given.
	allocated := make([]bool, len(in.rows))
	pendingRelease := make([]bool, len(in.rows))
	a, r, g := 0, 0, 0
	for a < len(in.rows) || r < len(in.relOrder) {
		next := int64(1<<63 - 1)
		kind := 0 // 0 growth, 1 release, 2 allocation
		if g < len(in.growth) {
			next = in.growth[g].at
		}
		if r < len(in.relOrder) {
			if t := in.rows[in.relOrder[r]].end; t < next {
				next, kind = t, 1
			}
		}
		if a < len(in.rows) {
			if t := in.rows[a].ts; t < next {
				next, kind = t, 2
			}
		}
		switch kind {
		case 0:
			growTo(in.growth[g].pool)
			g++
		case 1:
			i := int(in.relOrder[r])
			r++
			if !allocated[i] {
				// end == ts: "releases before allocations" would free it
				// before it was allocated; it is freed right after its
				// own allocation instead.
				pendingRelease[i] = true
				continue
			}
			release(i)
		case 2:
			allocate(a)
			allocated[a] = true
			if pendingRelease[a] {
				release(a)
			}
			a++
		}
	}
	return res
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var statTaken, statAllocs, statMaxFree int
