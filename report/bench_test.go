package report

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/simulate"
)

// BenchmarkReport writes the full report of a simulated case of
// LEAKMAP_BENCH_REQUESTS requests (default 100,000). The case (simulate,
// clean load, analysis) is built once into LEAKMAP_BENCH_DIR when set, and
// reused by later runs; building it is not timed. peak-rss-MB is the
// process's peak resident memory during the timed part (DuckDB included).
// LEAKMAP_BENCH_MEMORY_LIMIT (e.g. 1GiB) sets DuckDB's memory_limit as
// leakmap's --memory-limit does. LEAKMAP_BENCH_SIM=DIR loads an existing simulated case (leakmap simulate
// --out DIR, read only) instead of simulating one; when DIR also holds an
// ingested case.duckdb (and .ingested, as scripts/bench-analysis leaves
// it), that database is copied and analysed instead of ingesting the logs.
//
//	LEAKMAP_BENCH_REQUESTS=10000000 LEAKMAP_BENCH_DIR=/tmp/bench10m \
//	  go test -tags duckdb_arrow -run '^$' -bench BenchmarkReport -benchtime 1x ./report/
func BenchmarkReport(b *testing.B) {
	n := 100000
	if s := os.Getenv("LEAKMAP_BENCH_REQUESTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("LEAKMAP_BENCH_REQUESTS: %v", err)
		}
	}
	dir := os.Getenv("LEAKMAP_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	ctx := context.Background()
	dbPath := filepath.Join(dir, "case.duckdb")
	simDir := os.Getenv("LEAKMAP_BENCH_SIM")
	if simDir == "" {
		simDir = filepath.Join(dir, "sim")
	}
	incPath := filepath.Join(simDir, "incident.yaml")
	if _, err := os.Stat(dbPath); err != nil {
		if os.Getenv("LEAKMAP_BENCH_SIM") == "" {
			cfg := simulate.DefaultConfig()
			// The report reads the canonical logs alone: the real layouts
			// would be most of the time spent building the case.
			cfg.Requests, cfg.Noise, cfg.CSVPart, cfg.CanonicalOnly = n, false, false, true
			if _, err := simulate.Generate(ctx, nil, simDir, cfg); err != nil {
				b.Fatal(err)
			}
		}
		if ingested := filepath.Join(simDir, "case.duckdb"); os.Getenv("LEAKMAP_BENCH_SIM") != "" && fileExists(filepath.Join(simDir, ".ingested")) {
			// The coordinator's ingested case (scripts/bench-analysis's
			// layout): copied, not re-ingested (10M rows take minutes).
			if err := copyFile(ingested, dbPath+".tmp"); err != nil {
				b.Fatal(err)
			}
		} else {
			loadClean(b, ctx, simDir, dbPath+".tmp")
		}
		db, err := casedb.Open(ctx, dbPath+".tmp")
		if err != nil {
			b.Fatal(err)
		}
		inc, err := incident.Load(incPath)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := analysis.Run(ctx, db, nil, inc); err != nil {
			b.Fatal(err)
		}
		db.Close()
		if err := os.Rename(dbPath+".tmp", dbPath); err != nil {
			b.Fatal(err)
		}
	}
	inc, err := incident.Load(incPath)
	if err != nil {
		b.Fatal(err)
	}
	var opts casedb.Options
	if v := os.Getenv("LEAKMAP_BENCH_MEMORY_LIMIT"); v != "" {
		// As leakmap's --memory-limit (default: a quarter of memory, at most 3 GiB).
		if opts.MemoryLimit, err = casedb.ParseSize(v); err != nil {
			b.Fatalf("LEAKMAP_BENCH_MEMORY_LIMIT: %v", err)
		}
	}
	db, err := casedb.OpenWith(ctx, dbPath, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var limit string
	db.QueryRow("SELECT current_setting('memory_limit')").Scan(&limit)
	b.Logf("DuckDB memory_limit %s", limit)
	var requests, exposures int64
	db.QueryRow("SELECT (SELECT count(*) FROM requests), (SELECT count(*) FROM exposures)").Scan(&requests, &exposures)
	resetPeakRSS()
	cpu0 := cpuTime()
	out := filepath.Join(b.TempDir(), "out")
	var res *Result
	b.ResetTimer()
	for b.Loop() {
		if res, err = Write(ctx, db, benchLogger(), inc, out, *inc.AsOf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	user, sys := cpuTime().sub(cpu0)
	b.ReportMetric(user, "cpu-user-s") // the machine is shared: CPU time beside wall time
	b.ReportMetric(sys, "cpu-sys-s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "go-heap-sys-MB") // the Go side's share of the peak
	b.ReportMetric(float64(requests), "requests")
	b.ReportMetric(float64(exposures), "exposures")
	b.ReportMetric(float64(res.AffectedRequests), "affected")
	var size int64
	for _, f := range res.Files {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
			b.Logf("%s: %d bytes", filepath.Base(f), st.Size())
		}
	}
	b.ReportMetric(float64(size)/(1<<20), "output-MB")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

type rusage struct{ user, sys time.Duration }

// cpuTime is the process's CPU time so far (all threads, DuckDB's included).
func cpuTime() rusage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return rusage{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())}
}

func (r rusage) sub(from rusage) (user, sys float64) {
	return (r.user - from.user).Seconds(), (r.sys - from.sys).Seconds()
}

// resetPeakRSS starts a new peak-RSS measurement (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS reads VmHWM, the peak resident set size, in bytes.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchLogger logs each phase's elapsed time when LEAKMAP_BENCH_VERBOSE is set.
func benchLogger() *slog.Logger {
	if os.Getenv("LEAKMAP_BENCH_VERBOSE") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
