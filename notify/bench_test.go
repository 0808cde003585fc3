package notify

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigCaseSQL fills a case with n tenants (cust-000000...), 3 requests each:
// every even tenant has a trigger reading 2 requests of the odd tenant before
// it, so every tenant is notified; every 10th request has a logged prompt.
// $N is replaced by n.
const bigCaseSQL = `
INSERT INTO requests
SELECT i, 'req-' || lpad(i::VARCHAR, 9, '0'),
       TIMESTAMPTZ '2026-09-01T00:00:00Z' + to_seconds(i),
       TIMESTAMPTZ '2026-09-01T00:00:01Z' + to_seconds(i),
       'cust-' || lpad((i % $N)::VARCHAR, 6, '0'), 'glm-5.3',
       CASE WHEN i <= $N AND i % 2 = 0 THEN 900000 ELSE 4000 END, 10, 200, 'p1', 'd1',
       CASE WHEN i % 10 = 0 THEN 'prompt ' || md5(i::VARCHAR) || ' about ' || md5((i+1)::VARCHAR) || ' and the quarterly figures of unit ' || (i % 97)::VARCHAR END,
       NULL, i, 1, i
FROM range(1, 3 * $N + 1) t(i);
INSERT INTO affected_requests
SELECT request_id, row_id, tenant_id, ts, end_ts, model, prompt_tokens, completion_tokens, 681280, prefill_instance, decode_instance, 0
FROM requests WHERE row_id % 2 = 0 AND row_id <= $N;
INSERT INTO exposures
SELECT s.request_id, a.request_id, s.row_id, a.row_id, s.tenant_id, a.tenant_id, s.ts, a.ts,
       CASE k WHEN 1 THEN 'confirmed' ELSE 'probable' END, k, false, 'k=v'
FROM affected_requests a, range(1, 3) r(k)
JOIN requests s ON s.row_id = a.row_id + $N * k - 1;
INSERT INTO tenants
WITH r AS (SELECT tenant_id, count(*) AS n, min(ts) AS f FROM affected_requests GROUP BY ALL),
     s AS (SELECT source_tenant_id AS tenant_id, count(DISTINCT source_request_id) AS n, min(source_ts) AS f FROM exposures GROUP BY ALL)
SELECT tenant_id, CASE WHEN r.n IS NOT NULL AND s.n IS NOT NULL THEN 'both' WHEN r.n IS NOT NULL THEN 'recipient' ELSE 'source' END,
       'probable', coalesce(r.n, 0), coalesce(s.n, 0), least(r.f, s.f), greatest(r.f, s.f)
FROM r FULL JOIN s USING (tenant_id);
`

func bigCase(b *testing.B, n int) (*sql.DB, *Directory) {
	b.Helper()
	db := openDB(b)
	if _, err := db.Exec(strings.ReplaceAll(bigCaseSQL, "$N", fmt.Sprint(n))); err != nil {
		b.Fatal(err)
	}
	var d strings.Builder
	d.WriteString("tenant_id,name,email,language,jurisdiction\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&d, "cust-%06d,Customer %06d SAS,ops@c%06d.example,%s,FR\n", i, i, i, []string{"en", "fr"}[i%2])
	}
	dir, err := ParseDirectory([]byte(d.String()), "tenants.csv")
	if err != nil {
		b.Fatal(err)
	}
	return db, dir
}

// BenchmarkDraft100k drafts, checks and records the notices of 100,000
// tenants. Run: go test -tags duckdb_arrow ./notify -run '^$' -bench Draft100k -benchtime 1x
// LEAKMAP_BENCH_OUTBOX=DIR keeps the outbox there (DIR must not exist), to
// compare two builds' outboxes with diff -r; LEAKMAP_BENCH_TENANTS=N drafts
// N instead (a quicker profile); LEAKMAP_BENCH_REDRAFT=1 times a redraft.
func BenchmarkDraft100k(b *testing.B) {
	n := 100_000
	if s := os.Getenv("LEAKMAP_BENCH_TENANTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("LEAKMAP_BENCH_TENANTS: %v", err)
		}
	}
	db, dir := bigCase(b, n)
	inc := testIncident(b, "")
	// Time the draft's own check, not the tests' proof of its shortcut.
	defer func(v, w bool) { checkBuiltAgainstDecoded, checkQuickAgainstDigests = v, w }(checkBuiltAgainstDecoded, checkQuickAgainstDigests)
	checkBuiltAgainstDecoded, checkQuickAgainstDigests = false, false
	out := filepath.Join(b.TempDir(), "outbox")
	if keep := os.Getenv("LEAKMAP_BENCH_OUTBOX"); keep != "" {
		if b.N > 1 {
			b.Fatal("LEAKMAP_BENCH_OUTBOX: run with -benchtime 1x")
		}
		out = keep
	}
	// LEAKMAP_BENCH_REDRAFT=1 drafts once before the timer: the timed
	// draft is a redraft over a full outbox, as a responder's second run
	// is.
	if os.Getenv("LEAKMAP_BENCH_REDRAFT") != "" {
		if _, err := Draft(context.Background(), db, nil, inc, dir, out, testAsOf); err != nil {
			b.Fatal(err)
		}
	}
	// LEAKMAP_BENCH_CPUPROFILE=FILE profiles the draft alone (not the
	// case's set-up nor the standalone Check), the GC's workers included.
	if f := os.Getenv("LEAKMAP_BENCH_CPUPROFILE"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		if err := pprof.StartCPUProfile(w); err != nil {
			b.Fatal(err)
		}
	}
	// LEAKMAP_BENCH_LOG=1 logs the draft's steps (time, memory) to
	// standard error: where the serial head and tail end.
	var logger *slog.Logger
	if os.Getenv("LEAKMAP_BENCH_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b.ResetTimer()
	before := processUsage()
	var res *DraftResult
	for i := 0; i < b.N; i++ {
		var err error
		if logger != nil {
			logger.Debug("draft starts")
		}
		res, err = Draft(context.Background(), db, logger, inc, dir, out, testAsOf)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	draft := processUsage().since(before)
	if os.Getenv("LEAKMAP_BENCH_CPUPROFILE") != "" {
		pprof.StopCPUProfile()
	}
	if f := os.Getenv("LEAKMAP_BENCH_HEAPPROFILE"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	if res.Blocked != 0 || res.Drafted < n {
		b.Fatalf("drafted %d, blocked %d", res.Drafted, res.Blocked)
	}
	start := time.Now()
	chk, err := Check(context.Background(), out)
	if err != nil || len(chk.Failures) != 0 {
		b.Fatal(err, chk.Failures)
	}
	b.ReportMetric(float64(res.Drafted)/(b.Elapsed().Seconds()/float64(b.N)), "notices/s")
	// On a shared machine the CPU time is the figure to compare.
	b.ReportMetric(draft.cpu.Seconds()/float64(b.N), "draft-cpu-s")
	b.ReportMetric(float64(res.Drafted)/(draft.cpu.Seconds()/float64(b.N)), "notices/cpu-s")
	// The kernel's share: creating and writing the files, mostly.
	b.ReportMetric(draft.sys.Seconds()/float64(b.N), "draft-sys-s")
	// Memory touched for the first time (a minor fault each): on the VM
	// of docs/performance.md about 11 us a page.
	b.ReportMetric(float64(draft.faults)/float64(b.N), "draft-faults")
	b.ReportMetric(time.Since(start).Seconds(), "check-only-s")
	b.ReportMetric(float64(dirSize(b, out))/1e6, "outbox-MB")
}

// BenchmarkSend10k sends 10,000 notices to a go-smtp server on loopback, no
// rate limit, one connection. Run: ... -bench Send10k -benchtime 1x
func BenchmarkSend10k(b *testing.B) {
	db, dir := bigCase(b, 10_000)
	out := filepath.Join(b.TempDir(), "outbox")
	res, err := Draft(context.Background(), db, nil, testIncident(b, ""), dir, out, testAsOf)
	if err != nil {
		b.Fatal(err)
	}
	ts := startServer(b, nil)
	o := plainOpts(ts)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db.Exec(`DELETE FROM send_ledger`)
		b.StartTimer()
		got, err := Send(context.Background(), db, nil, out, o)
		if err != nil || got.Sent != res.Ready {
			b.Fatal(err, *got)
		}
	}
	b.StopTimer()
	if len(ts.messages()) != res.Ready*b.N {
		b.Fatalf("server got %d", len(ts.messages()))
	}
	b.ReportMetric(float64(res.Ready)/(b.Elapsed().Seconds()/float64(b.N)), "messages/s")
}

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// usage is what the process has used so far: CPU time (user and system),
// system time alone, and minor page faults (memory touched first).
type usage struct {
	cpu, sys time.Duration
	faults   int64
}

// processUsage reads the process's usage (zero if it cannot).
func processUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	return usage{time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano()), ru.Minflt}
}

// since is the usage between before and u.
func (u usage) since(before usage) usage {
	return usage{u.cpu - before.cpu, u.sys - before.sys, u.faults - before.faults}
}

// BenchmarkStoreNotices rewrites the notices table with 100,000 rows, as
// a draft of 100,000 tenants does on one core after its notices are
// drafted. Run: go test -tags duckdb_arrow ./notify -run '^$' -bench StoreNotices
func BenchmarkStoreNotices(b *testing.B) {
	db := openDB(b)
	rows := make([]IndexRow, 100_000)
	for i := range rows {
		id := fmt.Sprintf("cust-%06d", i)
		rows[i] = IndexRow{File: "tenant-" + id + ".eml", NoticeID: "WAI-2026-0908/tenant/" + id, Kind: "tenant", TenantID: id,
			Roles: "both", Language: []string{"en", "fr"}[i%2], Recipients: "ops@" + id + ".example", Status: StatusReady,
			MessageID: fmt.Sprintf("<notice.%024x@inference.example>", i), SHA256: fmt.Sprintf("%064x", i), ownNumbers: "1,2026,27,8,9"}
	}
	now := time.Date(2026, 9, 10, 9, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for range b.N {
		if err := storeNotices(context.Background(), db, rows, now); err != nil {
			b.Fatal(err)
		}
	}
}
