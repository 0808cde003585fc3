package analysis

import (
	"cmp"
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
// it travels there inside a run that also carries the slot's owner: the
// last request that wrote it (its index in the instance's rows), or
// unknownOwner when never written since the log began. Ownership therefore
// needs no separate map: a normal request relabels the runs it takes, a
// trigger relabels only its first 1+completion_tokens slots, and the labels
// of the rest are its sources.
//
// Which slot indices a run covers matters only under sorted, whose merge
// orders the free slots by index (sortedPool: runs [s,e)). Under fifo and
// lifo only the order of the slots in the lists decides who gets what, so
// orderPool keeps owners alone (runs of n slots) and joins any two
// neighbouring runs of one owner. Keeping indices there cost the replay its
// speed: the index ranges fragment as the log goes on (every partial
// allocation cuts one and they seldom touch again: 475 ranges per
// allocation on average over a simulated 1M fifo log, 850 under lifo),
// while owners stay about one run per request.

const unknownOwner int32 = -1

// slot is a slot index or count. 32 bits keep runs small; a pool is at most
// maxPool slots (4 billion tokens of KV cache: far beyond any machine).
type slot = uint32

const maxPool = 1<<32 - 1

// slotRun is the slots [s,e), all last written by owner: the index of a
// row of the instance (its allocation order), or unknownOwner. Policy
// sorted only.
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

// replayPool is one decode pool under one allocator policy. Rows are named
// by their index in the instance's rows.
type replayPool interface {
	// grow appends the never-written slots [from, to) to the free list.
	grow(from, to int64)
	// allocate gives row i up to n slots from the front of the free list
	// and returns how many were missing. Row i writes its first write
	// slots (all of them when write < 0); the owners of the others go to
	// stale, in order.
	allocate(i int, n, write int64, stale *sourceTally) (short int64)
	// release frees row i's slots, if it holds any.
	release(i int)
}

// sourceTally adds up a trigger's unwritten slots by previous owner.
type sourceTally struct {
	unknown  int64
	bySource map[int32]int64
	// Runs of one owner often follow each other: add them up before
	// touching the map.
	last  int32
	lastN int64
}

func (t *sourceTally) reset() {
	if t.bySource == nil {
		t.bySource = map[int32]int64{}
	}
	clear(t.bySource)
	t.unknown, t.last, t.lastN = 0, unknownOwner, 0
}

func (t *sourceTally) add(owner int32, n int64) {
	switch {
	case owner == unknownOwner:
		t.unknown += n
	case owner == t.last:
		t.lastN += n
	default:
		if t.lastN > 0 {
			t.bySource[t.last] += t.lastN
		}
		t.last, t.lastN = owner, n
	}
}

// result is the trigger rowID's slots, sources by row_id.
func (t *sourceTally) result(rowID int64, rows []replayRow) triggerSlots {
	if t.lastN > 0 {
		t.bySource[t.last] += t.lastN
		t.lastN = 0
	}
	ts := triggerSlots{rowID: rowID, unknown: t.unknown}
	for idx, n := range t.bySource {
		ts.sources = append(ts.sources, sourceSlots{rows[idx].rowID, n})
	}
	slices.SortFunc(ts.sources, func(a, b sourceSlots) int { return cmp.Compare(a.rowID, b.rowID) })
	return ts
}

// ownerRun is n neighbouring slots of a list (not necessarily of
// neighbouring indices), all last written by owner. n fits a slot: the
// slots of a list are distinct slots of one pool.
type ownerRun struct {
	n     slot
	owner int32
}

// appendOwner appends r to runs, joining it to the last run when they have
// the same owner.
func appendOwner(runs []ownerRun, r ownerRun) []ownerRun {
	if r.n == 0 {
		return runs
	}
	if k := len(runs); k > 0 && runs[k-1].owner == r.owner {
		runs[k-1].n += r.n
		return runs
	}
	return append(runs, r)
}

// ring is a double-ended queue in a ring buffer whose size is a power of
// two: the free lists of both pools.
type ring[T any] struct {
	buf     []T
	mask    int
	head, n int
}

func (q *ring[T]) grow() {
	nb := make([]T, max(64, 2*len(q.buf)))
	for i := 0; i < q.n; i++ {
		nb[i] = q.at(i)
	}
	q.buf, q.head, q.mask = nb, 0, len(nb)-1
}

// at is the i-th element from the front.
func (q *ring[T]) at(i int) T { return q.buf[(q.head+i)&q.mask] }

func (q *ring[T]) front() *T { return &q.buf[q.head] }

func (q *ring[T]) back() *T { return &q.buf[(q.head+q.n-1)&q.mask] }

func (q *ring[T]) pushBack(x T) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&q.mask] = x
	q.n++
}

func (q *ring[T]) pushFront(x T) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.head = (q.head - 1) & q.mask
	q.buf[q.head] = x
	q.n++
}

func (q *ring[T]) popFront() {
	q.head = (q.head + 1) & q.mask
	q.n--
}

// ownerDeque is the fifo/lifo free list: owner runs, neighbours of one
// owner joined, with the number of slots it holds.
type ownerDeque struct {
	q     ring[ownerRun]
	slots int64
}

func (d *ownerDeque) pushBack(r ownerRun) {
	if r.n == 0 {
		return
	}
	d.slots += int64(r.n)
	if d.q.n > 0 {
		if b := d.q.back(); b.owner == r.owner {
			b.n += r.n
			return
		}
	}
	d.q.pushBack(r)
}

func (d *ownerDeque) pushFront(r ownerRun) {
	if r.n == 0 {
		return
	}
	d.slots += int64(r.n)
	if d.q.n > 0 {
		if f := d.q.front(); f.owner == r.owner {
			f.n += r.n
			return
		}
	}
	d.q.pushFront(r)
}

// popFront removes the front run, or only its first limit slots when it
// has more; the deque must not be empty.
func (d *ownerDeque) popFront(limit int64) ownerRun {
	f := d.q.front()
	if int64(f.n) > limit {
		f.n -= slot(limit)
		d.slots -= limit
		return ownerRun{slot(limit), f.owner}
	}
	r := *f
	d.q.popFront()
	d.slots -= int64(r.n)
	return r
}

// orderPool is a pool under fifo or lifo: owners only (see the top of the
// file).
type orderPool struct {
	lifo  bool
	free  ownerDeque
	held  [][]ownerRun
	spare [][]ownerRun // released held lists, reused: no garbage per request
}

func (p *orderPool) grow(from, to int64) {
	p.free.pushBack(ownerRun{slot(to - from), unknownOwner})
}

func (p *orderPool) release(i int) {
	runs := p.held[i]
	p.held[i] = nil
	if runs == nil {
		return
	}
	if p.lifo { // the first held ends up at the front
		for k := len(runs) - 1; k >= 0; k-- {
			p.free.pushFront(runs[k])
		}
	} else {
		for _, r := range runs {
			p.free.pushBack(r)
		}
	}
	p.spare = append(p.spare, runs[:0])
}

func (p *orderPool) allocate(i int, n, write int64, stale *sourceTally) int64 {
	short := max(0, n-p.free.slots)
	n -= short
	var mine []ownerRun
	if k := len(p.spare); k > 0 {
		mine, p.spare = p.spare[k-1], p.spare[:k-1]
	}
	if write < 0 {
		write = n
	}
	for n > 0 {
		r := p.free.popFront(n)
		n -= int64(r.n)
		if write > 0 {
			w := min(write, int64(r.n))
			mine = appendOwner(mine, ownerRun{slot(w), int32(i)})
			write -= w
			r.n -= slot(w)
			if r.n == 0 {
				continue
			}
		}
		mine = appendOwner(mine, r)
		stale.add(r.owner, int64(r.n))
	}
	p.held[i] = mine
	return short
}

// runDeque is sortedPool's free list: a double-ended queue of runs with
// the number of slots it holds.
type runDeque struct {
	q          ring[slotRun]
	totalSlots int64
}

func (d *runDeque) pushBack(r slotRun) {
	if r.e <= r.s {
		return
	}
	d.totalSlots += r.len()
	if d.q.n > 0 { // coalesce: same owner, index-adjacent, adjacent in the list
		if b := d.q.back(); b.e == r.s && b.owner == r.owner {
			b.e = r.e
			return
		}
	}
	d.q.pushBack(r)
}

// take removes up to n slots from the front, appending them to dst in order
// (relabelled as owner when owner >= 0, coalescing index-adjacent runs). It
// returns dst and how many slots were missing.
func (d *runDeque) take(n int64, owner int32, dst []slotRun) ([]slotRun, int64) {
	for n > 0 && d.q.n > 0 {
		f := d.q.front()
		r := *f
		if l := r.len(); l <= n {
			n -= l
			d.totalSlots -= l
			d.q.popFront()
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
	for i := 0; i < d.q.n; i++ {
		dst = append(dst, d.q.at(i))
	}
	d.q.head, d.q.n, d.totalSlots = 0, 0, 0
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

// sortedPool is a pool under sorted: freed slots wait in the release list
// until an allocation finds the free list too short.
type sortedPool struct {
	free     runDeque
	released []slotRun
	held     [][]slotRun
	spare    [][]slotRun // released held lists, reused: no garbage per request
	taken    []slotRun   // scratch
}

func (p *sortedPool) grow(from, to int64) {
	p.free.pushBack(slotRun{slot(from), slot(to), unknownOwner})
}

func (p *sortedPool) release(i int) {
	runs := p.held[i]
	p.held[i] = nil
	if runs == nil {
		return
	}
	p.released = append(p.released, runs...)
	p.spare = append(p.spare, runs[:0])
}

func (p *sortedPool) allocate(i int, n, write int64, stale *sourceTally) int64 {
	if p.free.totalSlots < n && len(p.released) > 0 {
		// Merge the release list into the free list, by slot index.
		all := p.free.drain(p.released)
		slices.SortFunc(all, func(a, b slotRun) int { return cmp.Compare(int64(a.s), int64(b.s)) })
		for _, r := range all {
			p.free.pushBack(r)
		}
		p.released = all[:0]
	}
	var mine []slotRun
	if k := len(p.spare); k > 0 {
		mine, p.spare = p.spare[k-1][:0], p.spare[:k-1]
	}
	var short int64
	if write < 0 {
		mine, short = p.free.take(n, int32(i), mine)
		p.held[i] = mine
		return short
	}
	p.taken, short = p.free.take(n, -1, p.taken[:0])
	for _, r := range p.taken {
		if write > 0 {
			w := min(write, r.len())
			mine = appendRun(mine, slotRun{r.s, r.s + slot(w), int32(i)})
			write -= w
			r.s += slot(w)
			if r.len() == 0 {
				continue
			}
		}
		mine = appendRun(mine, r)
		stale.add(r.owner, r.len())
	}
	p.held[i] = mine
	return short
}

// replayOne replays one decode instance under policy (sorted, fifo, lifo).
func replayOne(in instanceReplay, policy string) replayResult {
	var res replayResult
	pool := in.pool
	for _, g := range in.growth {
		pool = max(pool, g.pool)
	}
	if pool > maxPool {
		res.err = fmt.Errorf("a decode pool of %d slots is beyond the replay's %d", pool, int64(maxPool))
		return res
	}
	var p replayPool
	switch policy {
	case incident.AllocFIFO, incident.AllocLIFO:
		p = &orderPool{lifo: policy == incident.AllocLIFO, held: make([][]ownerRun, len(in.rows))}
	default:
		p = &sortedPool{held: make([][]slotRun, len(in.rows))}
	}
	pool = in.pool
	p.grow(0, pool)

	growTo := func(size int64) {
		if size < pool {
			res.shrinks++ // slots cannot be taken back from their holders: keep them
			return
		}
		p.grow(pool, size)
		pool = size
	}
	var tally sourceTally
	allocate := func(i int) {
		row := in.rows[i]
		if row.slots <= 0 {
			return
		}
		if row.overwrite < 0 {
			if p.allocate(i, row.slots, -1, nil) > 0 {
				res.warnings++
			}
			return
		}
		// A trigger: it writes its first overwrite slots; the rest keep
		// their owners, who are its sources and stay their owners.
		tally.reset()
		if p.allocate(i, row.slots, row.overwrite, &tally) > 0 {
			res.warnings++
		}
		res.triggers = append(res.triggers, tally.result(row.rowID, in.rows))
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
			p.release(i)
		case 2:
			allocate(a)
			allocated[a] = true
			if pendingRelease[a] {
				p.release(a)
			}
			a++
		}
	}
	return res
}
