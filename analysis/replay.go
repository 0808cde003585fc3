package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/leakmap/leakmap/incident"
)

// This file is the decode-pool replay of DESIGN.md ("The decode pool, as
// replay sees it"). It is pure Go on plain values so that the worked trace
// and the edge cases can be tested without a database.
//
// The replay reads one decode instance as a stream of events in time order
// (the query's allocations, and the releases merged in by releaseMerge) and
// keeps only what the pool holds now: its memory follows the pool's live slots, not the
// number of rows (a provider's two weeks are tens of millions of them).
//
// Slots are never tracked one by one: prompts reach a million tokens and
// pools millions of slots. Every slot is, at any time, in exactly one of the
// free list, the release list (policy sorted) or a request's held list, and
// it travels there inside a run that also carries the slot's owner: the
// last request that wrote it, or unknownOwner when never written since the
// log began. Owners are small indices into an ownerTable, reused once a row
// owns no slot any more (all overwritten). Ownership therefore needs no
// separate map: a normal request relabels the runs it takes, a trigger
// relabels only its first 1+completion_tokens slots, and the labels of the
// rest are its sources.
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

// slotRun is the slots [s,e), all last written by owner (an ownerTable
// index, or unknownOwner). Policy sorted only.
type slotRun struct {
	s, e  slot
	owner int32
}

func (r slotRun) len() int64 { return int64(r.e - r.s) }

// eventKind says what a replay event does.
type eventKind uint8

// The kinds of DESIGN.md's event stream (releaseMerge makes it).
const (
	evRelease   eventKind = 0 // the row's slots go back (at end_ts)
	evAlloc     eventKind = 1 // the row takes its slots (at ts)
	evAllocFree eventKind = 2 // an allocation released right after itself: end_ts = ts
)

// replayEvent is one event of one decode instance.
type replayEvent struct {
	t         int64 // microseconds since the epoch
	slots     int64 // allocation: slots held, already rounded up to whole pages
	overwrite int64 // allocation: slots it writes; -1 means all of them (not a trigger)
	rowID     int64
	kind      eventKind
}

// poolGrowth makes the pool pool slots large from time at (microseconds).
type poolGrowth struct {
	at   int64
	pool int64
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

// ownerTable names the rows that still own slots (wrote them last) by a
// small index, with the runs each holds now. An index is reused once its
// row owns no slot and holds none, so the table is as large as the pool's
// live owners, not the log.
type ownerTable[R any] struct {
	rowID []int64
	slots []int64 // slots it wrote last, wherever they are now
	held  [][]R   // the runs it holds; nil when it holds none
	free  []int32
	spare [][]R // released held lists, reused: no garbage per request
	err   error
}

// add gives rowID an index; on overflow it sets err and returns index 0.
func (o *ownerTable[R]) add(rowID int64) int32 {
	if k := len(o.free); k > 0 {
		id := o.free[k-1]
		o.free = o.free[:k-1]
		o.rowID[id], o.slots[id] = rowID, 0
		return id
	}
	if len(o.rowID) >= math.MaxInt32 {
		o.err = fmt.Errorf("more than %d requests own slots of one pool at once", math.MaxInt32)
		return 0
	}
	o.rowID = append(o.rowID, rowID)
	o.slots = append(o.slots, 0)
	o.held = append(o.held, nil)
	return int32(len(o.rowID) - 1)
}

// list is an empty held list, reused when one is spare.
func (o *ownerTable[R]) list() []R {
	if k := len(o.spare); k > 0 {
		l := o.spare[k-1][:0]
		o.spare = o.spare[:k-1]
		return l
	}
	return nil
}

// hold makes runs (not empty) what id holds, of which it wrote wrote slots.
func (o *ownerTable[R]) hold(id int32, runs []R, wrote int64) {
	o.held[id] = runs
	o.slots[id] += wrote
}

// unhold ends id's holding (its runs have gone back to the pool).
func (o *ownerTable[R]) unhold(id int32) {
	o.spare = append(o.spare, o.held[id][:0])
	o.held[id] = nil
	o.drop(id)
}

// lost says n slots written last by owner were overwritten.
func (o *ownerTable[R]) lost(owner int32, n int64) {
	if owner == unknownOwner {
		return
	}
	o.slots[owner] -= n
	o.drop(owner)
}

func (o *ownerTable[R]) drop(id int32) {
	if o.slots[id] == 0 && o.held[id] == nil {
		o.free = append(o.free, id)
	}
}

// live is how many rows own or hold slots now.
func (o *ownerTable[R]) live() int { return len(o.rowID) - len(o.free) }

// replayPool is one decode pool under one allocator policy. Rows are named
// by their row_id; the slots' owners by ownerTable indices.
type replayPool interface {
	// grow appends the never-written slots [from, to) to the free list.
	grow(from, to int64)
	// allocate gives row rowID up to n slots from the front of the free
	// list and returns the index it holds them under (unknownOwner when it
	// got none) and how many were missing. The row writes its first write
	// slots (all of them when write < 0); the owners of the others go to
	// stale, in order.
	allocate(rowID, n, write int64, stale *sourceTally) (id int32, short int64)
	// release frees the slots held under id.
	release(id int32)
	// rowID is the row of an owner index.
	rowID(id int32) int64
	// live is how many rows own or hold slots now.
	live() int
	// failed is a sticky error (the owner table's).
	failed() error
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

// result is the trigger rowID's slots, sources by row_id (owner indices
// named through p, before any is reused).
func (t *sourceTally) result(rowID int64, p replayPool) triggerSlots {
	if t.lastN > 0 {
		t.bySource[t.last] += t.lastN
		t.lastN = 0
	}
	ts := triggerSlots{rowID: rowID, unknown: t.unknown}
	for idx, n := range t.bySource {
		ts.sources = append(ts.sources, sourceSlots{p.rowID(idx), n})
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
	lifo bool
	free ownerDeque
	own  ownerTable[ownerRun]
}

func (p *orderPool) grow(from, to int64) {
	p.free.pushBack(ownerRun{slot(to - from), unknownOwner})
}

func (p *orderPool) rowID(id int32) int64 { return p.own.rowID[id] }
func (p *orderPool) live() int            { return p.own.live() }
func (p *orderPool) failed() error        { return p.own.err }

func (p *orderPool) release(id int32) {
	runs := p.own.held[id]
	if p.lifo { // the first held ends up at the front
		for k := len(runs) - 1; k >= 0; k-- {
			p.free.pushFront(runs[k])
		}
	} else {
		for _, r := range runs {
			p.free.pushBack(r)
		}
	}
	p.own.unhold(id)
}

func (p *orderPool) allocate(rowID, n, write int64, stale *sourceTally) (int32, int64) {
	short := max(0, n-p.free.slots)
	n -= short
	if n == 0 {
		return unknownOwner, short
	}
	id := p.own.add(rowID)
	mine := p.own.list()
	if write < 0 {
		write = n
	}
	var wrote int64
	for n > 0 {
		r := p.free.popFront(n)
		n -= int64(r.n)
		if write > 0 {
			w := min(write, int64(r.n))
			p.own.lost(r.owner, w)
			mine = appendOwner(mine, ownerRun{slot(w), id})
			write -= w
			wrote += w
			r.n -= slot(w)
			if r.n == 0 {
				continue
			}
		}
		mine = appendOwner(mine, r)
		stale.add(r.owner, int64(r.n))
	}
	p.own.hold(id, mine, wrote)
	return id, short
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

// take removes up to n slots from the front, appending them to dst in
// order. It returns dst and how many slots were missing.
func (d *runDeque) take(n int64, dst []slotRun) ([]slotRun, int64) {
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
	own      ownerTable[slotRun]
	taken    []slotRun // scratch
}

func (p *sortedPool) grow(from, to int64) {
	p.free.pushBack(slotRun{slot(from), slot(to), unknownOwner})
}

func (p *sortedPool) rowID(id int32) int64 { return p.own.rowID[id] }
func (p *sortedPool) live() int            { return p.own.live() }
func (p *sortedPool) failed() error        { return p.own.err }

func (p *sortedPool) release(id int32) {
	p.released = append(p.released, p.own.held[id]...)
	p.own.unhold(id)
}

func (p *sortedPool) allocate(rowID, n, write int64, stale *sourceTally) (int32, int64) {
	if p.free.totalSlots < n && len(p.released) > 0 {
		// Merge the release list into the free list, by slot index.
		all := p.free.drain(p.released)
		slices.SortFunc(all, func(a, b slotRun) int { return cmp.Compare(int64(a.s), int64(b.s)) })
		for _, r := range all {
			p.free.pushBack(r)
		}
		p.released = all[:0]
	}
	var short int64
	p.taken, short = p.free.take(n, p.taken[:0])
	if len(p.taken) == 0 {
		return unknownOwner, short
	}
	id := p.own.add(rowID)
	mine := p.own.list()
	if write < 0 {
		write = n
	}
	var wrote int64
	for _, r := range p.taken {
		if write > 0 {
			w := min(write, r.len())
			p.own.lost(r.owner, w)
			mine = appendRun(mine, slotRun{r.s, r.s + slot(w), id})
			write -= w
			wrote += w
			r.s += slot(w)
			if r.len() == 0 {
				continue
			}
		}
		mine = appendRun(mine, r)
		stale.add(r.owner, r.len())
	}
	p.own.hold(id, mine, wrote)
	return id, short
}

// replayer replays one decode instance, event by event. Triggers go to
// emit as they are allocated.
type replayer struct {
	pool     replayPool
	size     int64 // the pool's slots now
	growth   []poolGrowth
	g        int
	holders  holderTable // row_id -> owner index, of the rows holding slots now
	tally    sourceTally
	emit     func(triggerSlots)
	rows     int64 // allocations seen
	warnings int64 // allocations larger than the free slots
	shrinks  int64 // capacity rows that would shrink the pool (ignored)
}

// newReplayer starts a pool of pool slots under policy (sorted, fifo,
// lifo) that grows as growth says (in time order).
func newReplayer(policy string, pool int64, growth []poolGrowth, emit func(triggerSlots)) (*replayer, error) {
	top := pool
	for _, g := range growth {
		top = max(top, g.pool)
	}
	if top > maxPool {
		return nil, fmt.Errorf("a decode pool of %d slots is beyond the replay's %d", top, int64(maxPool))
	}
	r := &replayer{size: pool, growth: growth, emit: emit}
	switch policy {
	case incident.AllocFIFO, incident.AllocLIFO:
		r.pool = &orderPool{lifo: policy == incident.AllocLIFO}
	default:
		r.pool = &sortedPool{}
	}
	r.pool.grow(0, pool)
	return r, nil
}

// event replays one event. Events come in time order; at equal times
// releases before allocations, each in the order the query gives. Pool
// growth at or before the event's time comes first.
func (r *replayer) event(e replayEvent) error {
	for r.g < len(r.growth) && r.growth[r.g].at <= e.t {
		if p := r.growth[r.g].pool; p < r.size {
			r.shrinks++ // slots cannot be taken back from their holders: keep them
		} else {
			r.pool.grow(r.size, p)
			r.size = p
		}
		r.g++
	}
	if e.kind == evRelease {
		if id, ok := r.holders.del(e.rowID); ok {
			r.pool.release(id)
		}
		return nil
	}
	r.rows++
	if e.slots <= 0 {
		return nil
	}
	var id int32
	var short int64
	if e.overwrite < 0 {
		id, short = r.pool.allocate(e.rowID, e.slots, -1, nil)
	} else {
		// A trigger: it writes its first overwrite slots; the rest keep
		// their owners, who are its sources and stay their owners.
		r.tally.reset()
		id, short = r.pool.allocate(e.rowID, e.slots, e.overwrite, &r.tally)
		r.emit(r.tally.result(e.rowID, r.pool))
	}
	if err := r.pool.failed(); err != nil {
		return err
	}
	if short > 0 {
		r.warnings++
	}
	if id == unknownOwner {
		return nil
	}
	if e.kind == evAllocFree {
		// end_ts = ts: "releases before allocations" would free it before
		// it was allocated; it is freed right after its own allocation.
		r.pool.release(id)
		return nil
	}
	if _, dup := r.holders.get(e.rowID); dup {
		return fmt.Errorf("row %d allocated twice", e.rowID)
	}
	r.holders.put(e.rowID, id)
	return nil
}

// replayAlloc is one replayable row of one decode instance as the query
// gives it (analysis_06_replay_events.sql): in allocation order, ts then
// request_id (byte order) then row_id. Its release is made here.
type replayAlloc struct {
	ts, end   int64 // microseconds since the epoch; end >= ts
	slots     int64 // already rounded up to whole pages
	overwrite int64 // -1 for a normal row, else the slots a trigger writes
	rowID     int64
	requestID string // orders releases at equal end times
}

// pendingRelease is a row allocated and not yet released.
type pendingRelease struct {
	end, rowID int64
	requestID  string
}

func (a pendingRelease) before(b pendingRelease) bool {
	if a.end != b.end {
		return a.end < b.end
	}
	if c := cmp.Compare(a.requestID, b.requestID); c != 0 {
		return c < 0
	}
	return a.rowID < b.rowID
}

// releaseMerge turns the allocations of one instance into DESIGN.md's event
// stream: a row's release (at end) comes after every allocation before end
// and before every allocation at or after it, releases at one time in
// (request_id, row_id) order. The releases wait in a heap of the rows
// allocated and not yet released (the pool's rows in flight), so the query
// sorts only the allocations, and nothing here grows with the log.
type releaseMerge struct {
	heap []pendingRelease
}

func (m *releaseMerge) push(p pendingRelease) {
	h := append(m.heap, p)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	m.heap = h
}

func (m *releaseMerge) pop() pendingRelease {
	h := m.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = pendingRelease{} // drop the string
	h = h[:n]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < n && h[l].before(h[small]) {
			small = l
		}
		if r := l + 1; r < n && h[r].before(h[small]) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	m.heap = h
	return top
}

// releaseUntil gives event the releases at or before t (all of them when
// all).
func (m *releaseMerge) releaseUntil(event func(replayEvent) error, t int64, all bool) error {
	for len(m.heap) > 0 && (all || m.heap[0].end <= t) {
		p := m.pop()
		if err := event(replayEvent{t: p.end, rowID: p.rowID, kind: evRelease}); err != nil {
			return err
		}
	}
	return nil
}

// alloc gives event the releases due by a's time, then a's allocation.
func (m *releaseMerge) alloc(event func(replayEvent) error, a replayAlloc) error {
	if err := m.releaseUntil(event, a.ts, false); err != nil {
		return err
	}
	k := evAllocFree
	if a.end != a.ts {
		k = evAlloc
		m.push(pendingRelease{end: a.end, rowID: a.rowID, requestID: a.requestID})
	}
	return event(replayEvent{t: a.ts, slots: a.slots, overwrite: a.overwrite, rowID: a.rowID, kind: k})
}

// finish gives event the releases left once every allocation is in.
func (m *releaseMerge) finish(event func(replayEvent) error) error {
	return m.releaseUntil(event, 0, true)
}
