package ingest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// recordSink keeps what parallelRecords emits, and can fail on a line.
type recordSink struct {
	lines  []int64
	failAt int64
}

func (r *recordSink) row(line int64, v values) error {
	if line == r.failAt {
		return errors.New("sink full")
	}
	if v[0] != strconv.FormatInt(line, 10) {
		return fmt.Errorf("line %d carries %v", line, v[0])
	}
	r.lines = append(r.lines, line)
	return nil
}

func (r *recordSink) reject(line int64, reason, raw string) error {
	if reason != "odd" || raw != strconv.FormatInt(line, 10) {
		return fmt.Errorf("line %d: reject %q %q", line, reason, raw)
	}
	r.lines = append(r.lines, -line)
	return nil
}

func (r *recordSink) duplicateLine() {}

func TestParallelRecords(t *testing.T) {
	const n = 10_000
	tests := []struct {
		name       string
		failSink   int64 // line the sink refuses
		failRead   int64 // line the producer fails on
		cancelAt   int64 // line at which the caller's context is cancelled
		wantErr    string
		wantPrefix int // lines emitted in order before the error (at least)
	}{
		{name: "all", wantPrefix: n},
		{name: "sink error", failSink: 7777, wantErr: "sink full", wantPrefix: 7776},
		{name: "read error", failRead: 3000, wantErr: "read failed"},
		{name: "cancelled", cancelAt: 5000, wantErr: context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			produce := func(yield func([]byte, int64) error) error {
				for line := int64(1); line <= n; line++ {
					if line == tt.failRead {
						return errors.New("read failed")
					}
					if line == tt.cancelAt {
						cancel()
					}
					if err := yield([]byte(strconv.FormatInt(line, 10)), line); err != nil {
						return err
					}
				}
				return nil
			}
			judge := func(raw []byte, line int64) outcome {
				if line%97 == 0 {
					time.Sleep(time.Microsecond) // workers finish out of order
				}
				if line%10 == 0 {
					return outcome{line: line, reason: "odd", raw: string(raw)}
				}
				var v values
				v[0] = string(raw)
				return outcome{line: line, v: v, ok: true}
			}
			s := &recordSink{failAt: tt.failSink}
			err := parallelRecords(ctx, produce, judge, s)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if len(s.lines) < tt.wantPrefix {
				t.Errorf("%d records emitted, want at least %d", len(s.lines), tt.wantPrefix)
			}
			for i, l := range s.lines {
				if want := int64(i + 1); l != want && l != -want {
					t.Fatalf("record %d is line %d: out of order", i+1, l)
				}
				if abs := max(l, -l); (l < 0) != (abs%10 == 0) {
					t.Fatalf("line %d judged wrong", l)
				}
			}
			// Every goroutine is gone.
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := runtime.NumGoroutine(); got > before {
				t.Errorf("%d goroutines left, %d before", got, before)
			}
		})
	}
}

// TestOrderedWorkAccountsForEveryUnit: whatever stops the run (emit,
// produce, the caller's context, or nothing), the units come out in the
// order sent, each one worked on before it is emitted or discarded, each
// emitted or discarded exactly once, every worker stopped, and the first
// error is the one returned.
func TestOrderedWorkAccountsForEveryUnit(t *testing.T) {
	type unit struct {
		n              int
		worked, handed int
	}
	emitFail := errors.New("emit failed")
	produceFail := errors.New("produce failed")
	cases := []struct {
		name              string
		units, emitFailAt int
		produceFailAt     int
		cancelAt          int
		want              error
	}{
		{name: "all", units: 5000, emitFailAt: -1, produceFailAt: -1, cancelAt: -1},
		{name: "none", units: 0, emitFailAt: -1, produceFailAt: -1, cancelAt: -1},
		{name: "emit fails", units: 5000, emitFailAt: 1234, produceFailAt: -1, cancelAt: -1, want: emitFail},
		{name: "emit fails first", units: 5000, emitFailAt: 0, produceFailAt: -1, cancelAt: -1, want: emitFail},
		{name: "produce fails", units: 5000, emitFailAt: -1, produceFailAt: 2000, cancelAt: -1, want: produceFail},
		{name: "cancelled", units: 5000, emitFailAt: -1, produceFailAt: -1, cancelAt: 700, want: context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var sent []*unit
			var started, stopped int
			var mu = make(chan struct{}, 1)
			emitted := 0
			err := orderedWork(ctx,
				func(send func(*unit) error) error {
					for i := range c.units {
						if i == c.produceFailAt {
							return produceFail
						}
						if i == c.cancelAt {
							cancel()
						}
						u := &unit{n: i}
						sent = append(sent, u)
						if err := send(u); err != nil {
							sent = sent[:len(sent)-1]
							return err
						}
					}
					return nil
				},
				func() (func(*unit), func()) {
					mu <- struct{}{}
					started++
					<-mu
					return func(u *unit) { u.worked++ }, func() { mu <- struct{}{}; stopped++; <-mu }
				},
				func(u *unit) error {
					if u.worked != 1 || u.handed != 0 {
						return fmt.Errorf("unit %d emitted after %d works, %d handings", u.n, u.worked, u.handed)
					}
					if u.n != emitted {
						return fmt.Errorf("unit %d emitted in place of %d", u.n, emitted)
					}
					u.handed++
					emitted++
					if u.n == c.emitFailAt {
						return emitFail
					}
					return nil
				},
				func(u *unit) {
					u.handed++
				})
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if started != runtime.GOMAXPROCS(0) || stopped != started {
				t.Errorf("workers: %d started, %d stopped", started, stopped)
			}
			for _, u := range sent {
				// A unit cancelled between the two queues is discarded unworked.
				if u.handed != 1 || u.worked > 1 || (u.worked == 0 && c.want == nil) {
					t.Errorf("unit %d: worked %d, handed %d times", u.n, u.worked, u.handed)
				}
			}
			if c.want == nil && emitted != c.units {
				t.Errorf("emitted %d of %d", emitted, c.units)
			}
			if c.emitFailAt >= 0 && emitted != c.emitFailAt+1 {
				t.Errorf("emitted %d units, want %d (up to the failure)", emitted, c.emitFailAt+1)
			}
		})
	}
}
