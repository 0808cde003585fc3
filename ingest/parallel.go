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
	return orderedWork(ctx,
		func(send func(*batch[T]) error) error {
			cur := &batch[T]{}
			err := produce(func(raw []byte, line int64) error {
				cur.raws = append(cur.raws, append([]byte(nil), raw...))
				cur.lines = append(cur.lines, line)
				if len(cur.raws) < recordBatch {
					return nil
				}
				b := cur
				cur = &batch[T]{}
				return send(b)
			})
			if err == nil && len(cur.raws) > 0 {
				err = send(cur)
			}
			return err
		},
		func() (func(*batch[T]), func()) {
			return func(b *batch[T]) {
				b.out = make([]T, len(b.raws))
				for j, raw := range b.raws {
					b.out[j] = work(raw, b.lines[j])
				}
			}, func() {}
		},
		func(b *batch[T]) error {
			for _, o := range b.out {
				if err := consume(o); err != nil {
					return err
				}
			}
			return nil
		},
		func(*batch[T]) {})
}

// orderedWork is the shape of every parallel read: produce runs on its own
// goroutine and sends units; the workers (one per CPU, each with its own
// state from newWorker, stopped when the units end) work on them in any
// order; emit takes them in the order they were sent, on the caller's
// goroutine. After the first error (emit's, produce's, or ctx's) the rest
// are drained, each handed to discard once its work is done, so that no
// goroutine is left blocked. The error returned is emit's, else produce's,
// else ctx's.
func orderedWork[U any](ctx context.Context, produce func(send func(U) error) error,
	newWorker func() (work func(U), stop func()), emit func(U) error, discard func(U)) error {
	return orderedWorkOn(ctx, runtime.GOMAXPROCS(0), produce, newWorker, emit, discard)
}

// orderedWorkOn is orderedWork on the given number of workers.
func orderedWorkOn[U any](ctx context.Context, workers int, produce func(send func(U) error) error,
	newWorker func() (work func(U), stop func()), emit func(U) error, discard func(U)) error {
	type pending struct {
		u    U
		done chan struct{}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	todo := make(chan *pending, workers)
	ordered := make(chan *pending, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work, stop := newWorker()
			defer stop()
			for p := range todo {
				work(p.u)
				close(p.done)
			}
		}()
	}
	var produceErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(todo)
		defer close(ordered)
		produceErr = produce(func(u U) error {
			p := &pending{u: u, done: make(chan struct{})}
			for _, ch := range []chan *pending{ordered, todo} {
				select {
				case ch <- p:
				case <-ctx.Done():
					if ch == todo {
						close(p.done) // in ordered, never worked on
					}
					return ctx.Err()
				}
			}
			return nil
		})
	}()
	var emitErr error
	for p := range ordered {
		if emitErr == nil {
			select {
			case <-p.done:
				if err := emit(p.u); err != nil {
					emitErr = err
					cancel()
				}
				continue
			case <-ctx.Done():
				emitErr = ctx.Err()
			}
		}
		<-p.done // drain, so the producer is not left blocked
		discard(p.u)
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
