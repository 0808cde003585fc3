package simulate

import (
	"fmt"
	"reflect"
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

// runTrace replays reqs on one decode instance of size slots and returns
// every row once allocated.
func runTrace(t *testing.T, policy string, size int64, page int64, reqs []traceReq) map[string]*row {
	t.Helper()
	p, err := newPool(policy, size)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*row{}
	rp := &replayer{pools: []*pool{p}, pageSize: page, onAlloc: func(r *row) error {
		// Keep a copy of what was held at allocation time (released later).
		c := *r
		c.held = append([]segment(nil), r.held...)
		got[r.id] = &c
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

func sourceSlots(r *row) map[string]int64 {
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
				if g := ranges(got[id].held); g != want {
					t.Errorf("%s gets %s, want %s", id, g, want)
				}
			}
			var own []segment
			for _, s := range got["T"].held {
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
		if g := ranges(got["B"].held); g != "0-3" {
			t.Errorf("B gets %s, want 0-3", g)
		}
		if g, want := sourceSlots(got["B"]), map[string]int64{"P": 2}; !reflect.DeepEqual(g, want) {
			t.Errorf("B sources = %v, want %v", g, want)
		}
		if g := ranges(got["a"].held); g != "4-7" {
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
			if g := ranges(got["Z"].held); g != want[0] {
				t.Errorf("%s: Z gets %s, want %s", policy, g, want[0])
			}
			if g := ranges(got["W"].held); g != want[1] {
				t.Errorf("%s: W gets %s, want %s", policy, g, want[1])
			}
		}
	})
	t.Run("shortage takes what there is", func(t *testing.T) {
		p, _ := newPool("sorted", 10)
		taken, short := p.alloc(6)
		p.release(taken)
		taken2, short2 := p.alloc(8) // 4 free + 6 released after the merge
		if short != 0 || short2 != 0 || ranges(taken2) != "0-7" {
			t.Fatalf("got %s short %d,%d", ranges(taken2), short, short2)
		}
		taken3, short3 := p.alloc(5)
		if short3 != 3 || ranges(taken3) != "8-9" {
			t.Errorf("got %s short %d, want 8-9 short 3", ranges(taken3), short3)
		}
	})
	t.Run("growth appends never-written slots", func(t *testing.T) {
		p, _ := newPool("fifo", 4)
		a, _ := p.alloc(4)
		p.grow(6)
		b, short := p.alloc(2)
		if short != 0 || ranges(b) != "4-5" || b[0].own != nil {
			t.Errorf("after growth got %s short %d", ranges(b), short)
		}
		_ = a
	})
	t.Run("pages round up", func(t *testing.T) {
		got := runTrace(t, "sorted", 64, 16, []traceReq{
			{id: "A", ts: 0, end: 1, slots: 20, complete: 1},
			{id: "T", ts: 2, end: 3, slots: 17, complete: 1, trigger: true},
		})
		if g := ranges(got["A"].held); g != "0-31" {
			t.Errorf("A gets %s, want 0-31", g)
		}
		// T holds 32 slots from 32 (the free list still has 32-63).
		if g, u := sourceSlots(got["T"]), got["T"].unknown; len(g) != 0 || u != 30 {
			t.Errorf("T sources %v unknown %d, want none and 30", g, u)
		}
	})
}
