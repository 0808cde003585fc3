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
