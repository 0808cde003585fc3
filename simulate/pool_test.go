package simulate

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ranges renders runs as "lo-hi" (inclusive), merging touching runs.
func ranges(segs []segment) string {
	var parts []string
	for i := 0; i < len(segs); {
		lo, hi := segs[i].lo, segs[i].hi
		for i++; i < len(segs) && segs[i].lo == hi; i++ {
			hi = segs[i].hi
		}
		parts = append(parts, fmt.Sprintf("%d-%d", lo, hi-1))
	}
	return strings.Join(parts, ",")
}

type traceReq struct {
	id              string
	ts, end         int64
	slots, complete int64
	trigger         bool
}

// traced is a row as it was once allocated, with the slots it held then.
type traced struct {
	*row
	segs []segment
}

// runTrace replays reqs on one decode instance of size slots and returns
// every row once allocated.
func runTrace(t *testing.T, policy string, size int64, page int64, reqs []traceReq) map[string]traced {
	t.Helper()
	p, err := newPool(policy, size)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]traced{}
	rp := &replayer{pools: []*pool{p}, pageSize: page, onAlloc: func(r *row) error {
		// Keep what was held at allocation time (released later).
		c := *r
		got[r.id] = traced{&c, p.segments(r.held)}
		return nil
	}}
	for _, q := range reqs {
		r := &row{id: q.id, ts: q.ts, end: q.end, prompt: q.slots - q.complete, completion: q.complete,
			served: true, trigger: q.trigger}
		r.own = &owner{id: q.id}
		if err := rp.advance(r.ts); err != nil {
			t.Fatal(err)
		}
		rp.add(r)
	}
	if err := rp.drain(); err != nil {
		t.Fatal(err)
	}
	return got
}

func sourceSlots(r traced) map[string]int64 {
	out := map[string]int64{}
	for o, n := range r.sources {
		out[o.id] = n
	}
	return out
}

// TestWorkedTrace checks DESIGN.md's 12-slot trace for every policy.
func TestWorkedTrace(t *testing.T) {
	reqs := []traceReq{
		{id: "A", ts: 0, end: 5, slots: 4, complete: 1},
		{id: "B", ts: 1, end: 3, slots: 4, complete: 1},
		{id: "C", ts: 4, end: 9, slots: 4, complete: 1},
		{id: "T", ts: 6, end: 8, slots: 7, complete: 1, trigger: true},
	}
	tests := []struct {
		policy                     string
		a, b, c, tGets, overwrites string
		sources                    map[string]int64
		unknown                    int64
	}{
		{"sorted", "0-3", "4-7", "8-11", "0-6", "0-1", map[string]int64{"A": 2, "B": 3}, 0},
		{"fifo", "0-3", "4-7", "8-11", "4-7,0-2", "4-5", map[string]int64{"B": 2, "A": 3}, 0},
		{"lifo", "0-3", "4-7", "4-7", "0-3,8-10", "0-1", map[string]int64{"A": 2}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			got := runTrace(t, tt.policy, 12, 1, reqs)
			for id, want := range map[string]string{"A": tt.a, "B": tt.b, "C": tt.c, "T": tt.tGets} {
				if g := ranges(got[id].segs); g != want {
					t.Errorf("%s gets %s, want %s", id, g, want)
				}
			}
			var own []segment
			for _, s := range got["T"].segs {
				if s.own != nil && s.own.id == "T" {
					own = append(own, s)
				}
			}
			if g := ranges(own); g != tt.overwrites {
				t.Errorf("T overwrites %s, want %s", g, tt.overwrites)
			}
			if g := sourceSlots(got["T"]); !reflect.DeepEqual(g, tt.sources) {
				t.Errorf("sources of T = %v, want %v", g, tt.sources)
			}
			if got["T"].unknown != tt.unknown {
				t.Errorf("T unknown slots = %d, want %d", got["T"].unknown, tt.unknown)
			}
		})
	}
}

// TestReplayRules covers the rules the worked trace does not: owners stay
// owners for a later trigger, equal times (releases first, then request_id
// byte order), shortage, growth and pages.
func TestReplayRules(t *testing.T) {
	t.Run("stale owners stay owners", func(t *testing.T) {
		got := runTrace(t, "fifo", 10, 1, []traceReq{
			{id: "A", ts: 0, end: 1, slots: 10, complete: 1},
			{id: "T1", ts: 2, end: 3, slots: 10, complete: 2, trigger: true}, // writes 0-2
			{id: "T2", ts: 4, end: 5, slots: 10, complete: 0, trigger: true}, // writes 0
		})
		if g, want := sourceSlots(got["T2"]), map[string]int64{"T1": 2, "A": 7}; !reflect.DeepEqual(g, want) {
			t.Errorf("T2 sources = %v, want %v", g, want)
		}
	})
	t.Run("release before allocation at equal times, then byte order", func(t *testing.T) {
		// lifo: P's slots go to the front at t=5, and "B" < "a" takes them.
		got := runTrace(t, "lifo", 8, 1, []traceReq{
			{id: "P", ts: 0, end: 5, slots: 4, complete: 1},
			{id: "a", ts: 5, end: 9, slots: 4, complete: 1},
			{id: "B", ts: 5, end: 9, slots: 4, complete: 1, trigger: true},
		})
		if g := ranges(got["B"].segs); g != "0-3" {
			t.Errorf("B gets %s, want 0-3", g)
		}
		if g, want := sourceSlots(got["B"]), map[string]int64{"P": 2}; !reflect.DeepEqual(g, want) {
			t.Errorf("B sources = %v, want %v", g, want)
		}
		if g := ranges(got["a"].segs); g != "4-7" {
			t.Errorf("a gets %s, want 4-7", g)
		}
	})
	t.Run("freed runs keep the order the request held them", func(t *testing.T) {
		reqs := []traceReq{
			{id: "X", ts: 0, end: 1, slots: 2, complete: 1},
			{id: "Y", ts: 0, end: 5, slots: 2, complete: 1},
			{id: "Z", ts: 2, end: 3, slots: 4, complete: 1},
			{id: "W", ts: 4, end: 6, slots: 3, complete: 1},
		}
		for policy, want := range map[string][2]string{
			"fifo":   {"4-5,0-1", "4-5,0-0"},
			"lifo":   {"0-1,4-5", "0-1,4-4"},
			"sorted": {"0-1,4-5", "0-1,4-4"}, // merged and sorted when the free list is too short
		} {
			got := runTrace(t, policy, 6, 1, reqs)
			if g := ranges(got["Z"].segs); g != want[0] {
				t.Errorf("%s: Z gets %s, want %s", policy, g, want[0])
			}
			if g := ranges(got["W"].segs); g != want[1] {
				t.Errorf("%s: W gets %s, want %s", policy, g, want[1])
			}
		}
	})
	t.Run("shortage takes what there is", func(t *testing.T) {
		p, _ := newPool("sorted", 10)
		taken, short := p.alloc(6)
		p.release(taken)
		taken2, short2 := p.alloc(8) // 4 free + 6 released after the merge
		if short != 0 || short2 != 0 || ranges(p.segments(taken2)) != "0-7" {
			t.Fatalf("got %s short %d,%d", ranges(p.segments(taken2)), short, short2)
		}
		taken3, short3 := p.alloc(5)
		if short3 != 3 || ranges(p.segments(taken3)) != "8-9" {
			t.Errorf("got %s short %d, want 8-9 short 3", ranges(p.segments(taken3)), short3)
		}
	})
	t.Run("growth appends never-written slots", func(t *testing.T) {
		p, _ := newPool("fifo", 4)
		a, _ := p.alloc(4)
		p.grow(6)
		b, short := p.alloc(2)
		if segs := p.segments(b); short != 0 || ranges(segs) != "4-5" || segs[0].own != nil {
			t.Errorf("after growth got %s short %d", ranges(segs), short)
		}
		_ = a
	})
	t.Run("pages round up", func(t *testing.T) {
		got := runTrace(t, "sorted", 64, 16, []traceReq{
			{id: "A", ts: 0, end: 1, slots: 20, complete: 1},
			{id: "T", ts: 2, end: 3, slots: 17, complete: 1, trigger: true},
		})
		if g := ranges(got["A"].segs); g != "0-31" {
			t.Errorf("A gets %s, want 0-31", g)
		}
		// T holds 32 slots from 32 (the free list still has 32-63).
		if g, u := sourceSlots(got["T"]), got["T"].unknown; len(g) != 0 || u != 30 {
			t.Errorf("T sources %v unknown %d, want none and 30", g, u)
		}
	})
}

// slotPool is DESIGN.md's decode pool taken word for word: one owner per
// slot and the free list as a list of slot indices. Slow, and obviously
// right: the reference for pool.
type slotPool struct {
	policy         string
	owners         []*owner
	free, released []int64
}

func newSlotPool(policy string, size int64) *slotPool {
	s := &slotPool{policy: policy}
	s.grow(size)
	return s
}

func (s *slotPool) grow(size int64) {
	for i := int64(len(s.owners)); i < size; i++ {
		s.owners = append(s.owners, nil)
		s.free = append(s.free, i)
	}
}

// alloc takes n slots and writes the first write of them as self.
func (s *slotPool) alloc(n int64, self *owner, write int64) (slots []int64, short int64, sources map[string]int64, unknown int64) {
	if s.policy == "sorted" && int64(len(s.free)) < n && len(s.released) > 0 {
		s.free = append(s.free, s.released...)
		s.released = nil
		slices.Sort(s.free)
	}
	k := min(n, int64(len(s.free)))
	slots = slices.Clone(s.free[:k])
	s.free = s.free[k:]
	sources = map[string]int64{}
	for i, x := range slots {
		switch {
		case int64(i) < write:
			s.owners[x] = self
		case s.owners[x] == nil:
			unknown++
		default:
			sources[s.owners[x].id]++
		}
	}
	return slots, n - k, sources, unknown
}

func (s *slotPool) release(slots []int64) {
	switch s.policy {
	case "sorted":
		s.released = append(s.released, slots...)
	case "fifo":
		s.free = append(s.free, slots...)
	case "lifo":
		s.free = append(slices.Clone(slots), s.free...)
	}
}

// perSlot renders segments slot by slot as "index:owner".
func perSlot(segs []segment) []string {
	var out []string
	for _, s := range segs {
		for x := s.lo; x < s.hi; x++ {
			id := "-"
			if s.own != nil {
				id = s.own.id
			}
			out = append(out, fmt.Sprintf("%d:%s", x, id))
		}
	}
	return out
}

// TestPoolMatchesSlots replays the same random allocations, triggers,
// releases (in random order) and growth on pool and on slotPool, and wants
// every allocation to get the same slots, in the same order, with the same
// owners, sources and unknown slots.
func TestPoolMatchesSlots(t *testing.T) {
	tests := []struct {
		policy string
		size   int64
		seed   uint64
	}{
		{"sorted", 64, 1},
		{"fifo", 64, 1},
		{"lifo", 64, 1},
		{"sorted", 500, 2},
		{"fifo", 500, 2},
		{"lifo", 500, 2},
		{"fifo", 37, 3},
		{"lifo", 37, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d/%d", tt.policy, tt.size, tt.seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tt.seed, 1))
			p, err := newPool(tt.policy, tt.size)
			if err != nil {
				t.Fatal(err)
			}
			ref := newSlotPool(tt.policy, tt.size)
			type live struct {
				held  hold
				slots []int64
			}
			var inflight []live
			size := tt.size
			for i := range 3000 {
				for len(inflight) > 0 && rng.IntN(3) > 0 {
					j := rng.IntN(len(inflight))
					p.release(inflight[j].held)
					ref.release(inflight[j].slots)
					inflight = slices.Delete(inflight, j, j+1)
				}
				if rng.IntN(200) == 0 {
					size += 1 + rng.Int64N(20)
					p.grow(size)
					ref.grow(size)
				}
				n := 1 + rng.Int64N(size/3) // now and then more than is free: a shortage
				write := n
				if rng.IntN(3) == 0 { // a trigger
					write = rng.Int64N(n + 1)
				}
				self := &owner{id: strconv.Itoa(i)}
				taken, short := p.alloc(n)
				held, sources, unknown := occupy(taken, self, write)
				wantSlots, wantShort, wantSources, wantUnknown := ref.alloc(n, self, write)

				got := perSlot(p.segments(held))
				var want []string
				for _, x := range wantSlots {
					id := "-"
					if ref.owners[x] != nil {
						id = ref.owners[x].id
					}
					want = append(want, fmt.Sprintf("%d:%s", x, id))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("request %d got slots %v, want %v", i, got, want)
				}
				gotSources := map[string]int64{}
				for o, k := range sources {
					gotSources[o.id] = k
				}
				if short != wantShort || unknown != wantUnknown || !reflect.DeepEqual(gotSources, wantSources) {
					t.Fatalf("request %d got short %d unknown %d sources %v, want %d, %d, %v",
						i, short, unknown, gotSources, wantShort, wantUnknown, wantSources)
				}
				inflight = append(inflight, live{held, wantSlots})
			}
		})
	}
}

// BenchmarkOracleReplay replays LEAKMAP_BENCH_REQUESTS (default 300,000)
// synthetic requests on one 3.2M-slot pool under each policy, without the
// logs around it: about 40 requests of 1k-81k slots in flight, 1 in 100 a
// trigger. Under fifo and lifo the free list's index ranges fragment, so
// time per request must not grow with the log.
//
//	go test -tags duckdb_arrow -run '^$' -bench OracleReplay -benchtime 1x ./simulate
func BenchmarkOracleReplay(b *testing.B) {
	n := 300000
	if s := os.Getenv("LEAKMAP_BENCH_REQUESTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	rows := make([]*row, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		ts := int64(i) * 10
		rows[i] = &row{id: fmt.Sprintf("req_%09d", i), ts: ts, end: ts + 100 + rng.Int64N(600),
			prompt: 1000 + rng.Int64N(80000), completion: 100, served: true, trigger: rng.IntN(100) == 0}
	}
	for _, policy := range []string{"sorted", "fifo", "lifo"} {
		b.Run(policy, func(b *testing.B) {
			for b.Loop() {
				p, err := newPool(policy, 3200000)
				if err != nil {
					b.Fatal(err)
				}
				rp := &replayer{pools: []*pool{p}, pageSize: 1, onAlloc: func(*row) error { return nil }}
				for _, r := range rows {
					r.own, r.held, r.sources = &owner{id: r.id}, hold{}, nil
					if err := rp.advance(r.ts); err != nil {
						b.Fatal(err)
					}
					rp.add(r)
				}
				if err := rp.drain(); err != nil {
					b.Fatal(err)
				}
				if rp.warnings > 0 {
					b.Fatalf("%d allocations short of slots", rp.warnings)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
