package notify

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// parallelEach runs f(state, i) for i in [0, n) on one worker per CPU,
// each worker with its own state (newState), and returns the first error
// by index (so the error does not depend on scheduling). Workers stop
// taking work after an error or when ctx is done.
func parallelEach[S any](ctx context.Context, n int, newState func() S, f func(S, int) error) error {
	return parallelEachFed(ctx, n, func(send func(int, struct{}) bool) error {
		for i := 0; i < n && send(i, struct{}{}); i++ {
		}
		return nil
	}, newState, func(st S, i int, _ struct{}) error { return f(st, i) })
}

// parallelEachFed is parallelEach with each item's input v made by feed,
// which calls send(i, v) for i = 0, 1, ... n-1 in turn (stopping when send
// says false) on the caller's goroutine, at most a few items ahead of the
// workers: the inputs are never all held at once. A feed's error counts
// as the error of the first item it did not send.
func parallelEachFed[S, V any](ctx context.Context, n int, feed func(send func(int, V) bool) error, newState func() S, f func(S, int, V) error) error {
	type item struct {
		i int
		v V
	}
	errsAt := make([]error, n)
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	next := make(chan item, workers)
	var wg sync.WaitGroup
	var failed sync.Once
	stop := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newState()
			for it := range next {
				if errsAt[it.i] = f(st, it.i, it.v); errsAt[it.i] != nil {
					failed.Do(func() { close(stop) })
				}
				// Yield between items: a worker that never stops is
				// preempted by a signal every 10 ms, and on a loaded VM
				// the signals cost (runtime.asyncPreempt: 12% of the
				// draft's CPU samples at 20,000 notices, 0.2% with this).
				runtime.Gosched()
			}
		}()
	}
	sent := 0
	feedErr := feed(func(i int, v V) bool {
		if i != sent || i >= n {
			panic(fmt.Sprintf("notify: fed item %d, want %d of %d", i, sent, n))
		}
		select {
		case next <- item{i, v}:
			sent++
			return true
		case <-stop:
		case <-ctx.Done():
		}
		return false
	})
	close(next)
	wg.Wait()
	if feedErr != nil && sent < n {
		errsAt[sent] = feedErr
	} else if feedErr != nil {
		return feedErr
	}
	for _, err := range errsAt {
		if err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if sent < n {
		return fmt.Errorf("notify: %d of %d items fed", sent, n)
	}
	return nil
}

// checkListing is the check result of notices already checked from memory
// (checked: file -> reasons), with the listing checks 'notify check' makes
// of an outbox: every .eml is in the manifest, every manifest file is
// there.
func checkListing(outbox string, m *manifest, checked map[string]string) (*CheckResult, error) {
	// Names in directory order, not sorted (the failures are, at the end):
	// the outbox of 100,000 notices is read twice while drafting.
	entries, err := readDirUnsorted(outbox)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	onDisk := make(map[string]bool, len(entries))
	res := &CheckResult{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".eml") {
			continue
		}
		name := e.Name()
		onDisk[name] = true
		res.Checked++
		if _, ok := m.notices[name]; !ok {
			res.Failures = append(res.Failures, CheckFailure{name, "not listed in the isolation manifest: cannot tell whose notice it is"})
		} else if why := checked[name]; why != "" {
			res.Failures = append(res.Failures, CheckFailure{name, why})
		}
	}
	for _, name := range m.files {
		if !onDisk[name] {
			res.Failures = append(res.Failures, CheckFailure{name, "listed in the isolation manifest but missing from the outbox"})
		}
	}
	sort.SliceStable(res.Failures, func(i, j int) bool { return res.Failures[i].File < res.Failures[j].File })
	return res, nil
}

// readDirUnsorted is os.ReadDir without its sort by name.
func readDirUnsorted(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// parallelEachWeighed is parallelEachFed with the items admitted by their
// weight (weigh): those in flight, fed or being worked on, weigh at most
// maxWeight together, and one heavier than that is worked on alone.
func parallelEachWeighed[S, V any](ctx context.Context, n, maxWeight int, weigh func(V) int, feed func(send func(int, V) bool) error, newState func() S, f func(S, int, V) error) error {
	type weighed struct {
		v V
		w int
	}
	g := newWeightGate(maxWeight)
	return parallelEachFed(ctx, n, func(send func(int, weighed) bool) error {
		return feed(func(i int, v V) bool {
			w := g.acquire(weigh(v))
			if !send(i, weighed{v, w}) {
				g.release(w)
				return false
			}
			return true
		})
	}, newState, func(st S, i int, it weighed) error {
		defer g.release(it.w)
		return f(st, i, it.v)
	})
}

// weightGate admits work by weight: at most max in flight, and an item
// heavier than max alone (it waits for the others and they for it).
type weightGate struct {
	mu   sync.Mutex
	cond sync.Cond
	max  int
	used int
}

func newWeightGate(max int) *weightGate {
	g := &weightGate{max: max}
	g.cond.L = &g.mu
	return g
}

// acquire waits until w more fits and takes it; it returns what it took,
// which release gives back.
func (g *weightGate) acquire(w int) int {
	w = min(max(w, 1), g.max)
	g.mu.Lock()
	for g.used+w > g.max {
		g.cond.Wait()
	}
	g.used += w
	g.mu.Unlock()
	return w
}

func (g *weightGate) release(w int) {
	g.mu.Lock()
	g.used -= w
	g.mu.Unlock()
	g.cond.Broadcast()
}
