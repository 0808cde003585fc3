package simulate

import (
	"container/heap"
	"fmt"
	"sort"
)

// This file is the oracle's decode-pool replay, written to follow DESIGN.md's
// "Contamination model" line by line. Slots are kept as runs (segments) of
// consecutive slot indices that share one content owner, never one entry per
// slot: a prompt may hold a million slots.

// owner is whoever last wrote a run of slots. A nil *owner means "never
// written since the log began" (an unknown slot).
type owner struct {
	id       string
	tenant   int32
	hasText  bool   // the source's prompt text is logged
	textSeed uint64 // regenerates the prompt text (see text.go)
	noDecode bool   // the log lost its decode instance (noise)
}

// segment is the run of slots [lo, hi) whose content was written by own.
type segment struct {
	lo, hi int64
	own    *owner
}

func (s segment) n() int64 { return s.hi - s.lo }

// deque is a ring buffer of segments: lifo pushes to the front, fifo to the
// back, and every allocation pops from the front.
type deque struct {
	buf        []segment
	head, size int
	slots      int64 // total slots held
}

func (d *deque) grow() {
	nb := make([]segment, max(16, 2*len(d.buf)))
	for i := 0; i < d.size; i++ {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(s segment) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = s
	d.size++
	d.slots += s.n()
}

func (d *deque) pushFront(s segment) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = s
	d.size++
	d.slots += s.n()
}

func (d *deque) front() *segment { return &d.buf[d.head] }

func (d *deque) popFront() segment {
	s := d.buf[d.head]
	d.buf[d.head] = segment{}
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	d.slots -= s.n()
	return s
}

// all returns the segments front to back and empties the deque.
func (d *deque) drain() []segment {
	out := make([]segment, 0, d.size)
	for d.size > 0 {
		out = append(out, d.popFront())
	}
	return out
}

// pool is one decode instance's KV pool under one allocator policy.
type pool struct {
	policy   string
	size     int64     // slots ever created: [0, size)
	free     deque     // allocation always takes from its front
	released []segment // sorted policy only: freed slots waiting for a merge
	relSlots int64
}

func newPool(policy string, size int64) (*pool, error) {
	switch policy {
	case "sorted", "fifo", "lifo":
	default:
		return nil, fmt.Errorf("allocator: unknown policy %q (want sorted, fifo or lifo)", policy)
	}
	p := &pool{policy: policy}
	p.grow(size)
	return p, nil
}

// grow appends never-written slots [size, newSize) to the free list (a decode
// pool that grows in the capacity timeline). A shrink is ignored: the
// simulator never writes one.
func (p *pool) grow(newSize int64) {
	if newSize <= p.size {
		return
	}
	p.free.pushBack(segment{lo: p.size, hi: newSize})
	p.size = newSize
}

// alloc takes n slots from the front of the free list, in order. Under
// sorted, when the free list is too short, the release list is merged into
// it first and the whole list sorted by slot index. It returns the runs
// taken and how many slots were missing (a replay warning when > 0).
func (p *pool) alloc(n int64) (taken []segment, short int64) {
	if p.policy == "sorted" && p.free.slots < n && len(p.released) > 0 {
		p.merge()
	}
	for n > 0 && p.free.size > 0 {
		f := p.free.front()
		if f.n() <= n {
			s := p.free.popFront()
			taken = append(taken, s)
			n -= s.n()
			continue
		}
		taken = append(taken, segment{lo: f.lo, hi: f.lo + n, own: f.own})
		f.lo += n
		p.free.slots -= n
		n = 0
	}
	return taken, n
}

// merge joins the release list and the free list, sorted by slot index.
func (p *pool) merge() {
	all := append(p.free.drain(), p.released...)
	p.released, p.relSlots = nil, 0
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	for _, s := range all {
		// Coalesce touching runs of one owner: fewer runs, same content.
		if p.free.size > 0 {
			last := &p.free.buf[(p.free.head+p.free.size-1)%len(p.free.buf)]
			if last.hi == s.lo && last.own == s.own {
				last.hi = s.hi
				p.free.slots += s.n()
				continue
			}
		}
		p.free.pushBack(s)
	}
}

// release frees a request's runs, given in the order it held them.
func (p *pool) release(held []segment) {
	switch p.policy {
	case "sorted":
		p.released = append(p.released, held...)
		for _, s := range held {
			p.relSlots += s.n()
		}
	case "fifo":
		for _, s := range held {
			p.free.pushBack(s)
		}
	case "lifo":
		for i := len(held) - 1; i >= 0; i-- {
			p.free.pushFront(held[i])
		}
	}
}

// occupy records what a request writes into the runs it was given. A
// normal request writes every slot (write >= total); a trigger writes only
// its first write = 1+completion_tokens slots, and the rest keep their
// previous owners, who are its sources. It returns the runs now held (in
// order), the slots of each previous owner left unwritten, and how many of
// those had never been written.
func occupy(taken []segment, self *owner, write int64) (held []segment, sources map[*owner]int64, unknown int64) {
	add := func(s segment) {
		if k := len(held); k > 0 && held[k-1].hi == s.lo && held[k-1].own == s.own {
			held[k-1].hi = s.hi
			return
		}
		held = append(held, s)
	}
	for _, s := range taken {
		if write > 0 {
			w := min(write, s.n())
			add(segment{lo: s.lo, hi: s.lo + w, own: self})
			write -= w
			s.lo += w
			if s.n() == 0 {
				continue
			}
		}
		// Stale: the trigger reads what the previous owner left.
		if s.own == nil {
			unknown += s.n()
		} else {
			if sources == nil {
				sources = map[*owner]int64{}
			}
			sources[s.own] += s.n()
		}
		add(s)
	}
	return held, sources, unknown
}

// Event kinds, in the order they are applied at equal times: pool growth
// (the capacity in force at t), then releases, then allocations.
const (
	evGrow = iota
	evRelease
	evAlloc
)

// event is one step of the replay; rows at equal times and of one kind go in
// request_id byte order.
type event struct {
	t    int64 // Unix milliseconds
	kind int
	id   string
	r    *row
	// evGrow only
	inst int
	size int64
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.t != b.t {
		return a.t < b.t
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.id < b.id // Go compares strings byte by byte
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// replayer runs the events of every decode instance in time order. Rows
// are pushed in non-decreasing ts; onAlloc sees each row (replayed or not)
// once, in (ts, request_id) order, after its slots were handed out.
type replayer struct {
	pools    []*pool
	pageSize int64
	events   eventHeap
	warnings int
	onAlloc  func(*row) error
}

// slotsFor is prompt+completion rounded up to whole pages.
func (rp *replayer) slotsFor(r *row) int64 {
	n := r.prompt + r.completion
	if rp.pageSize > 1 {
		n = (n + rp.pageSize - 1) / rp.pageSize * rp.pageSize
	}
	return n
}

func (rp *replayer) push(e event) { heap.Push(&rp.events, e) }

// add schedules a row: its allocation at ts and, when it holds slots, its
// release at end_ts.
func (rp *replayer) add(r *row) {
	rp.push(event{t: r.ts, kind: evAlloc, id: r.id, r: r})
	if r.replayed() {
		rp.push(event{t: r.end, kind: evRelease, id: r.id, r: r})
	}
}

// advance applies every event strictly before t (rows still to come have
// ts >= t, and may sort before events at t itself).
func (rp *replayer) advance(t int64) error {
	for len(rp.events) > 0 && rp.events[0].t < t {
		if err := rp.step(heap.Pop(&rp.events).(event)); err != nil {
			return err
		}
	}
	return nil
}

func (rp *replayer) drain() error {
	for len(rp.events) > 0 {
		if err := rp.step(heap.Pop(&rp.events).(event)); err != nil {
			return err
		}
	}
	return nil
}

func (rp *replayer) step(e event) error {
	switch e.kind {
	case evGrow:
		rp.pools[e.inst].grow(e.size)
	case evRelease:
		rp.pools[e.r.decode].release(e.r.held)
		e.r.held = nil
	case evAlloc:
		r := e.r
		if r.replayed() {
			taken, short := rp.pools[r.decode].alloc(rp.slotsFor(r))
			if short > 0 {
				rp.warnings++
			}
			write := rp.slotsFor(r)
			if r.trigger {
				write = 1 + r.completion
			}
			r.held, r.sources, r.unknown = occupy(taken, r.own, write)
		}
		return rp.onAlloc(r)
	}
	return nil
}
