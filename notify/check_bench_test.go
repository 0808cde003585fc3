package notify

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkCheck5k runs the isolation check alone over the outbox of 5,000
// tenants. Run: go test -tags duckdb_arrow ./notify -run '^$' -bench Check5k
func BenchmarkCheck5k(b *testing.B) {
	db, dir := bigCase(b, 5000)
	out := filepath.Join(b.TempDir(), "outbox")
	res, err := Draft(context.Background(), db, nil, testIncident(b, ""), dir, out, testAsOf)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		chk, err := Check(context.Background(), out)
		if err != nil || len(chk.Failures) != 0 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Drafted)/(b.Elapsed().Seconds()/float64(b.N)), "notices/s")
}
