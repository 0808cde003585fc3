package ingest

import (
	"context"
	"runtime"
	"sync"
)

// outcome is one record's fate on the checked path: a row or a reject.
type outcome struct {
	line   int64
	v      values
	ok     bool
	reason string // when !ok
	raw    string // when !ok
}

// recordBatch is how many records a worker takes at a time.
const recordBatch = 512

type batch[T any] struct {
	raws  [][]byte
	lines []int64
	out   []T
	done  chan struct{}
}

// parallelRecords runs judge over the records that produce yields, on every
// CPU, and hands the outcomes to s in input order (the sink appends through
// one DuckDB appender, which is not safe for concurrent use). Parsing and
// converting a record is most of the checked path's time, and records do
// not depend on each other. produce must not keep raw after yield returns.
func parallelRecords(ctx context.Context, produce func(yield func(raw []byte, line int64) error) error,
	judge func(raw []byte, line int64) outcome, s sink) error {
	return parallelMap(ctx, produce, judge, func(o outcome) error { return o.to(s) })
}

// to hands the outcome to s.
func (o outcome) to(s sink) error {
	if o.ok {
		return s.row(o.line, o.v)
	}
	return s.reject(o.line, o.reason, o.raw)
}

// parallelMap runs work over the records that produce yields, on every CPU,
// and hands the results to consume in input order, on the caller's
// goroutine.
func parallelMap[T any](ctx context.Context, produce func(yield func(raw []byte, line int64) error) error,
	work func(raw []byte, line int64) T, consume func(T) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	todo := make(chan *batch[T], 2*workers)
	ordered := make(chan *batch[T], 2*workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range todo {
				b.out = make([]T, len(b.raws))
				for j, raw := range b.raws {
					b.out[j] = work(raw, b.lines[j])
				}
				close(b.done)
			}
		}()
	}
	var produceErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(todo)
		defer close(ordered)
		cur := &batch[T]{done: make(chan struct{})}
		send := func() error {
			for _, ch := range []chan *batch[T]{ordered, todo} {
				select {
				case ch <- cur:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			cur = &batch[T]{done: make(chan struct{})}
			return nil
		}
		produceErr = produce(func(raw []byte, line int64) error {
			cur.raws = append(cur.raws, append([]byte(nil), raw...))
			cur.lines = append(cur.lines, line)
			if len(cur.raws) == recordBatch {
				return send()
			}
			return nil
		})
		if produceErr == nil && len(cur.raws) > 0 {
			produceErr = send()
		}
	}()
	var emitErr error
	for b := range ordered {
		if emitErr != nil {
			continue // drain, so the producer is not left blocked
		}
		select {
		case <-b.done:
		case <-ctx.Done():
			emitErr = ctx.Err()
			continue
		}
		for _, o := range b.out {
			if err := consume(o); err != nil {
				emitErr = err
				cancel()
				break
			}
		}
	}
	cancel()
	wg.Wait()
	if emitErr != nil {
		return emitErr
	}
	if produceErr != nil {
		return produceErr
	}
	return parent.Err()
}

// parallelEach runs f(0..n-1) on every CPU and returns when all are done;
// once ctx is cancelled the indexes not yet started are skipped.
func parallelEach(ctx context.Context, n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
