package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkManySmallFiles: a fleet's hourly SGLang parts, many small files
// (LEAKMAP_BENCH_FILES, default 2,000; 20 requests each), loaded by one
// ingest; reports ms per file. docs/performance.md records a run.
func BenchmarkManySmallFiles(b *testing.B) {
	files := 2000
	if v := os.Getenv("LEAKMAP_BENCH_FILES"); v != "" {
		files, _ = strconv.Atoi(v)
	}
	dir := b.TempDir()
	start := time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)
	for f := 0; f < files; f++ {
		host, hour := fmt.Sprintf("glm-d%d.dc1.example.com", f%50), start.Add(time.Duration(f/50)*time.Hour)
		var sb strings.Builder
		for i := 0; i < 20; i++ {
			rid := fmt.Sprintf("chatcmpl-%d-%d", f, i)
			t0 := hour.Add(time.Duration(i) * time.Minute)
			room := int64(f*100 + i)
			sb.WriteString(sglangReceived(t0.Format("2006-01-02T15:04:05.000000"), rid, room, 0, "") + "\n")
			sb.WriteString(sglangFinished(t0.Add(2*time.Second).Format("2006-01-02T15:04:05.000000"), rid, room, 0, "", "",
				stopMeta(rid, 1000+i, 20, "2.0")) + "\n")
		}
		name := fmt.Sprintf("%s_0.log.%s", host, hour.Format("2006-01-02_15"))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		db := openCase(b)
		b.StartTimer()
		// LEAKMAP_BENCH_PROFILE=FILE: a CPU profile of the ingest alone (not
		// of writing the files).
		if p := os.Getenv("LEAKMAP_BENCH_PROFILE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			pprof.StartCPUProfile(f)
			defer f.Close()
		}
		t0, c0 := time.Now(), cpuTime()
		res, err := Run(context.Background(), db, nil, []string{dir}, Options{Preset: "sglang", Role: "decode", Model: "glm-5.3"})
		if err != nil {
			b.Fatal(err)
		}
		el, cpu := time.Since(t0), cpuTime()-c0
		pprof.StopCPUProfile()
		if res.Loaded != int64(files*20) {
			b.Fatalf("loaded %d", res.Loaded)
		}
		b.ReportMetric(float64(el.Microseconds())/1000/float64(files), "ms/file")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(files), "cpu-ms/file")
		b.Logf("%d files, %d records: wall %v (%.2f ms/file), CPU %v (%.2f ms/file)", files, res.Loaded, el.Round(time.Millisecond),
			float64(el.Microseconds())/1000/float64(files), cpu.Round(time.Millisecond), float64(cpu.Microseconds())/1000/float64(files))
	}
}

// cpuTime is the process's user and system CPU time: on a shared machine
// it varies less than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
