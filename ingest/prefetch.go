package ingest

import (
	"context"
	"runtime"
)

// prefetchMaxBytes: files up to this size (on disk) are read ahead, on
// other CPUs, into memory while earlier files are appended; bigger ones are
// read as they are appended (their records are parsed on every CPU then).
// A fleet's hourly parts are a few hundred KiB each: read one at a time,
// each file's parse was too small to use a second core.
const prefetchMaxBytes = 4 << 20

// recorded is what a read gave a sink, kept to be handed to the real sink
// in file order.
type recorded struct {
	ops []recOp
	err error // readFile's
}

type recOp struct {
	kind        uint8 // opRow, opReject, opDup
	id, line    int64
	v           values
	reason, raw string
}

const (
	opRow = iota
	opReject
	opDup
)

// aheadSink is a sink that records.
type aheadSink struct{ r *recorded }

func (s aheadSink) row(line int64, v values) error { return s.rowAt(line, line, v) }
func (s aheadSink) rowAt(id, line int64, v values) error {
	s.r.ops = append(s.r.ops, recOp{kind: opRow, id: id, line: line, v: v})
	return nil
}
func (s aheadSink) reject(line int64, reason, raw string) error {
	s.r.ops = append(s.r.ops, recOp{kind: opReject, line: line, reason: reason, raw: raw})
	return nil
}
func (s aheadSink) duplicateLine() { s.r.ops = append(s.r.ops, recOp{kind: opDup}) }

// replay hands the recorded read to s and returns the read's error.
func (r *recorded) replay(s *sourceSink) error {
	for i := range r.ops {
		o := &r.ops[i]
		var err error
		switch o.kind {
		case opRow:
			err = s.rowAt(o.id, o.line, o.v)
		case opReject:
			err = s.reject(o.line, o.reason, o.raw)
		case opDup:
			s.duplicateLine()
		}
		if err != nil {
			return err
		}
	}
	return r.err
}

// prefetcher reads the small files of a batch ahead, at most a few files
// beyond the one being appended, so memory stays bounded whatever the
// batch's size.
type prefetcher struct {
	ready []chan *recorded // by batch index; nil: not read ahead
	slots chan struct{}    // a token per file read ahead and not yet taken
}

// take waits for file i's read ahead; ok is false when i is not read ahead.
func (p *prefetcher) take(ctx context.Context, i int) (r *recorded, ok bool, err error) {
	if p.ready[i] == nil {
		return nil, false, nil
	}
	select {
	case r = <-p.ready[i]:
		<-p.slots
		return r, true, nil
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
}

func canPrefetch(fi *fileInfo) bool {
	return fi.format != formatParquet && fi.size <= prefetchMaxBytes
}

// prefetch starts reading the batch's small files (indexes todo) ahead,
// until ctx is cancelled (Parquet, which needs the connection, never is).
func prefetch(ctx context.Context, batch []recordFile, todo []int, prog *progress) *prefetcher {
	p := &prefetcher{ready: make([]chan *recorded, len(batch))}
	var small []int
	for _, i := range todo {
		if canPrefetch(batch[i].fi) {
			p.ready[i] = make(chan *recorded, 1)
			small = append(small, i)
		}
	}
	if len(small) == 0 {
		return p
	}
	workers := runtime.GOMAXPROCS(0)
	// A token per file in flight: workers plus a few waiting to be appended.
	p.slots = make(chan struct{}, 2*workers)
	slots := p.slots
	next := make(chan int)
	go func() {
		defer close(next)
		for _, i := range small {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range next {
				rf := batch[i]
				r := &recorded{}
				r.err = readFile(ctx, rf.fi, rf.m, prog, rf.m.instance(rf.fi.name), nil, aheadSink{r})
				p.ready[i] <- r
			}
		}()
	}
	return p
}
