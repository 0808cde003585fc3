package simulate

import (
	"container/heap"
	"fmt"
	"sort"
)

// This file is the oracle's decode-pool replay, written to follow DESIGN.md's
// "Contamination model" line by line. Slots are never kept one by one (a
// prompt may hold a million of them). A sequence of slots (the free list, or
// what a request holds) is kept twice, both in the same slot order:
//   - runs: who last wrote them, one run per stretch of one owner;
//   - pieces: which slot indices they are, a balanced tree of index ranges.
// They are kept apart because under fifo and lifo the index ranges fragment
// as the log goes on (every partial allocation cuts one, and they seldom
// touch again: half a million ranges after 1M requests), while the owners
// stay a few runs per request: the tree moves any number of ranges in
// O(log n), and only the owner runs are walked.

// owner is whoever last wrote a run of slots. A nil *owner means "never
// written since the log began" (an unknown slot).
type owner struct {
	id       string
	tenant   int32
	hasText  bool   // the source's prompt text is logged
	textSeed uint64 // regenerates the prompt text (see text.go)
	template int8   // the owner's tenant's template (-1: none)
	model    int8
	noDecode bool // the log lost its decode instance (noise)
}

// run is n consecutive slots of a sequence, all written last by own.
type run struct {
	n   int64
	own *owner
}

// segment is the slots [lo, hi), all written last by own: runs and pieces
// zipped together (the sorted merge and the tests).
type segment struct {
	lo, hi int64
	own    *owner
}

func (s segment) n() int64 { return s.hi - s.lo }

// hold is a sequence of slots taken from a pool: runs and the root of its
// pieces in that pool's tree.
type hold struct {
	runs   []run
	pieces int32
}

// runDeque is a ring buffer of runs: lifo pushes to the front, fifo to the
// back, and every allocation pops from the front. Touching runs of one owner
// are joined: fewer runs, same content.
type runDeque struct {
	buf        []run
	head, size int
	slots      int64 // total slots held
}

func (d *runDeque) grow() {
	nb := make([]run, max(16, 2*len(d.buf)))
	for i := 0; i < d.size; i++ {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *runDeque) pushBack(r run) {
	if r.n == 0 {
		return
	}
	d.slots += r.n
	if d.size > 0 {
		if last := &d.buf[(d.head+d.size-1)%len(d.buf)]; last.own == r.own {
			last.n += r.n
			return
		}
	}
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = r
	d.size++
}

func (d *runDeque) pushFront(r run) {
	if r.n == 0 {
		return
	}
	d.slots += r.n
	if d.size > 0 && d.buf[d.head].own == r.own {
		d.buf[d.head].n += r.n
		return
	}
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = r
	d.size++
}

func (d *runDeque) front() *run { return &d.buf[d.head] }

func (d *runDeque) popFront() run {
	r := d.buf[d.head]
	d.buf[d.head] = run{}
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	d.slots -= r.n
	return r
}

// drain returns the runs front to back and empties the deque.
func (d *runDeque) drain() []run {
	out := make([]run, 0, d.size)
	for d.size > 0 {
		out = append(out, d.popFront())
	}
	return out
}

// piece is a node of a treap ordered by position in its sequence: the slot
// indices [lo, hi), then its subtree's slot count. Children are indexes into
// the tree's slab (0: none), so the garbage collector has no pointers to
// follow through millions of pieces. 32-bit slots keep a node at 24 bytes
// (a pool is at most maxPool slots, checked by Config.Validate).
type piece struct {
	lo, hi, sum uint32
	l, r        int32
	prio        uint32
}

const maxPool = 1<<32 - 1

// chunkBits sizes the slab's chunks: nodes never move, so growing the slab
// copies nothing and leaves no garbage.
const chunkBits = 16

// pieceTree holds the pieces of every sequence of one pool.
type pieceTree struct {
	chunks [][]piece // node 0 is the empty tree (sum 0)
	used   int32     // nodes ever made
	free   []int32   // recycled nodes
	rnd    uint64
}

func newPieceTree() pieceTree {
	return pieceTree{chunks: [][]piece{make([]piece, 1<<chunkBits)}, used: 1, rnd: 0x9e3779b97f4a7c15}
}

func (t *pieceTree) at(a int32) *piece { return &t.chunks[a>>chunkBits][a&(1<<chunkBits-1)] }

func (t *pieceTree) sum(a int32) int64 { return int64(t.at(a).sum) }

// node makes a one-piece tree. Priorities only shape the tree, never its
// order, so a fixed xorshift seed is enough.
func (t *pieceTree) node(lo, hi int64) int32 {
	t.rnd ^= t.rnd << 13
	t.rnd ^= t.rnd >> 7
	t.rnd ^= t.rnd << 17
	var a int32
	if k := len(t.free); k > 0 {
		a = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		if int(t.used>>chunkBits) == len(t.chunks) {
			t.chunks = append(t.chunks, make([]piece, 1<<chunkBits))
		}
		a = t.used
		t.used++
	}
	*t.at(a) = piece{lo: uint32(lo), hi: uint32(hi), sum: uint32(hi - lo), prio: uint32(t.rnd >> 32)}
	return a
}

func (t *pieceTree) fix(a int32) {
	p := t.at(a)
	p.sum = p.hi - p.lo + t.at(p.l).sum + t.at(p.r).sum
}

// join concatenates a and b.
func (t *pieceTree) join(a, b int32) int32 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	pa, pb := t.at(a), t.at(b)
	if pa.prio >= pb.prio {
		pa.r = t.join(pa.r, b)
		t.fix(a)
		return a
	}
	pb.l = t.join(a, pb.l)
	t.fix(b)
	return b
}

// split cuts a after its first k slots, cutting a piece in two if needed.
func (t *pieceTree) split(a int32, k int64) (int32, int32) {
	if a == 0 || k <= 0 {
		return 0, a
	}
	p := t.at(a)
	if k >= int64(p.sum) {
		return a, 0
	}
	ls, own := t.sum(p.l), int64(p.hi-p.lo)
	switch {
	case k <= ls:
		x, y := t.split(p.l, k)
		p.l = y
		t.fix(a)
		return x, a
	case k >= ls+own:
		x, y := t.split(p.r, k-ls-own)
		p.r = x
		t.fix(a)
		return a, y
	}
	cut := int64(p.lo) + k - ls
	m, r := t.node(cut, int64(p.hi)), p.r
	p.hi, p.r = uint32(cut), 0
	t.fix(a)
	return a, t.join(m, r)
}

// concat is join, and joins the last piece of a and the first of b when
// they touch, so that slots coming back together take no extra node.
func (t *pieceTree) concat(a, b int32) int32 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	last, first := t.at(a), t.at(b)
	for last.r != 0 {
		last = t.at(last.r)
	}
	for first.l != 0 {
		first = t.at(first.l)
	}
	if n := first.hi - first.lo; last.hi == first.lo {
		f, rest := t.split(b, int64(n)) // f is the first piece alone
		t.free = append(t.free, f)
		for x := a; x != 0; x = t.at(x).r {
			t.at(x).sum += n
		}
		last.hi += n
		b = rest
	}
	return t.join(a, b)
}

// each calls fn on every piece of a, in order.
func (t *pieceTree) each(a int32, fn func(lo, hi int64)) {
	if a == 0 {
		return
	}
	p := t.at(a)
	t.each(p.l, fn)
	fn(int64(p.lo), int64(p.hi))
	t.each(p.r, fn)
}

// drop recycles every node of a.
func (t *pieceTree) drop(a int32) {
	if a == 0 {
		return
	}
	t.drop(t.at(a).l)
	t.drop(t.at(a).r)
	t.free = append(t.free, a)
}

// pool is one decode instance's KV pool under one allocator policy.
type pool struct {
	policy     string
	size       int64 // slots ever created: [0, size)
	tree       pieceTree
	free       runDeque // the free list's owners; allocation takes from its front
	freePieces int32    // the free list's pieces
	released   []hold   // sorted policy only: freed slots waiting for a merge
}

func newPool(policy string, size int64) (*pool, error) {
	switch policy {
	case "sorted", "fifo", "lifo":
	default:
		return nil, fmt.Errorf("allocator: unknown policy %q (want sorted, fifo or lifo)", policy)
	}
	if size > maxPool {
		return nil, fmt.Errorf("decode pool: %d slots, at most %d", size, int64(maxPool))
	}
	p := &pool{policy: policy, tree: newPieceTree()}
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
	p.free.pushBack(run{n: newSize - p.size})
	p.freePieces = p.tree.concat(p.freePieces, p.tree.node(p.size, newSize))
	p.size = newSize
}

// alloc takes n slots from the front of the free list, in order. Under
// sorted, when the free list is too short, the release list is merged into
// it first and the whole list sorted by slot index. It returns the slots
// taken and how many were missing (a replay warning when > 0).
func (p *pool) alloc(n int64) (taken hold, short int64) {
	if p.policy == "sorted" && p.free.slots < n && len(p.released) > 0 {
		p.merge()
	}
	got := min(n, p.free.slots)
	taken.pieces, p.freePieces = p.tree.split(p.freePieces, got)
	for k := got; k > 0; {
		f := p.free.front()
		if f.n <= k {
			r := p.free.popFront()
			taken.runs = append(taken.runs, r)
			k -= r.n
			continue
		}
		taken.runs = append(taken.runs, run{n: k, own: f.own})
		f.n -= k
		p.free.slots -= k
		k = 0
	}
	return taken, n - got
}

// segments zips h's runs and pieces, in order.
func (p *pool) segments(h hold) []segment {
	var out []segment
	i, used := 0, int64(0) // runs[i] has used slots already zipped
	p.tree.each(h.pieces, func(lo, hi int64) {
		for lo < hi {
			r := h.runs[i]
			w := min(hi-lo, r.n-used)
			out = append(out, segment{lo: lo, hi: lo + w, own: r.own})
			lo += w
			if used += w; used == r.n {
				i, used = i+1, 0
			}
		}
	})
	return out
}

// merge joins the release list and the free list, sorted by slot index.
func (p *pool) merge() {
	h := hold{runs: p.free.drain(), pieces: p.freePieces}
	all := p.segments(h)
	p.tree.drop(h.pieces)
	for _, h := range p.released {
		all = append(all, p.segments(h)...)
		p.tree.drop(h.pieces)
	}
	p.released, p.freePieces = nil, 0
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	// One piece per stretch of touching slots, whoever wrote them.
	var lo, hi int64
	for i, s := range all {
		p.free.pushBack(run{n: s.n(), own: s.own})
		if i > 0 && s.lo == hi {
			hi = s.hi
			continue
		}
		if i > 0 {
			p.freePieces = p.tree.join(p.freePieces, p.tree.node(lo, hi))
		}
		lo, hi = s.lo, s.hi
	}
	if len(all) > 0 {
		p.freePieces = p.tree.join(p.freePieces, p.tree.node(lo, hi))
	}
}

// release frees a request's slots, given in the order it held them.
func (p *pool) release(h hold) {
	switch p.policy {
	case "sorted":
		p.released = append(p.released, h)
	case "fifo":
		for _, r := range h.runs {
			p.free.pushBack(r)
		}
		p.freePieces = p.tree.concat(p.freePieces, h.pieces)
	case "lifo":
		for i := len(h.runs) - 1; i >= 0; i-- {
			p.free.pushFront(h.runs[i])
		}
		p.freePieces = p.tree.concat(h.pieces, p.freePieces)
	}
}

// occupy records what a request writes into the slots it was given. A
// normal request writes every slot (write >= total); a trigger writes only
// its first write = 1+completion_tokens slots, and the rest keep their
// previous owners, who are its sources. It returns the slots now held (the
// same pieces, new runs), the slots of each previous owner left unwritten,
// and how many of those had never been written.
func occupy(taken hold, self *owner, write int64) (held hold, sources map[*owner]int64, unknown int64) {
	held.pieces = taken.pieces
	add := func(r run) {
		if k := len(held.runs); k > 0 && held.runs[k-1].own == r.own {
			held.runs[k-1].n += r.n
			return
		}
		held.runs = append(held.runs, r)
	}
	for _, r := range taken.runs {
		if write > 0 {
			w := min(write, r.n)
			add(run{n: w, own: self})
			write -= w
			r.n -= w
			if r.n == 0 {
				continue
			}
		}
		// Stale: the trigger reads what the previous owner left.
		if r.own == nil {
			unknown += r.n
		} else {
			if sources == nil {
				sources = map[*owner]int64{}
			}
			sources[r.own] += r.n
		}
		add(r)
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
		e.r.held = hold{}
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
