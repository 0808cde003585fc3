// Package memwatch adds the process's memory to debug logs: the peak
// resident set size since the previous step, the resident set now, and the
// Go heap. It tells which step of a long command holds the memory (DuckDB's
// outside its buffer pool, or Go's) without a profiler.
package memwatch

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// interval is how often the resident set is sampled once debug logging
// asked for it: often enough to catch a step's peak, cheap (one small read
// of /proc/self/statm).
const interval = 20 * time.Millisecond

var (
	once sync.Once
	mu   sync.Mutex
	peak int64 // highest RSS sampled since the last Step
)

// Step logs msg at debug level with args and the memory figures, and starts
// the next step's peak. Nothing is sampled unless logger has debug on.
func Step(ctx context.Context, logger *slog.Logger, msg string, args ...any) {
	if logger == nil || !logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	once.Do(func() {
		go func() {
			for range time.Tick(interval) {
				sample()
			}
		}()
	})
	now := sample()
	mu.Lock()
	p := peak
	peak = now
	mu.Unlock()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	var heap uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		heap = s[0].Value.Uint64()
	}
	logger.DebugContext(ctx, msg, append(args, "rss_peak_mib", p>>20, "rss_mib", now>>20, "go_heap_mib", heap>>20)...)
}

// sample reads the resident set and raises the step's peak.
func sample() int64 {
	r := RSS()
	mu.Lock()
	peak = max(peak, r)
	mu.Unlock()
	return r
}

var pageSize = int64(os.Getpagesize())

// RSS is the process's resident set size in bytes (0 where /proc is missing).
func RSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return n * pageSize
}
