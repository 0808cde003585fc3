package notify

import (
	"context"
	"os"
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

// BenchmarkCheckBuilt runs the draft's own check (checkBuilt, from memory,
// one checker) over the messages of 5,000 tenants, read from an outbox
// drafted once. Run: go test -tags duckdb_arrow ./notify -run '^$' -bench CheckBuilt
func BenchmarkCheckBuilt(b *testing.B) {
	defer func(v, w bool) { checkBuiltAgainstDecoded, checkQuickAgainstDigests = v, w }(checkBuiltAgainstDecoded, checkQuickAgainstDigests)
	checkBuiltAgainstDecoded, checkQuickAgainstDigests = false, false
	db, dir := bigCase(b, 5000)
	out := filepath.Join(b.TempDir(), "outbox")
	if _, err := Draft(context.Background(), db, nil, testIncident(b, ""), dir, out, testAsOf); err != nil {
		b.Fatal(err)
	}
	m, err := readManifest(context.Background(), filepath.Join(out, manifestName))
	if err != nil {
		b.Fatal(err)
	}
	defer m.close()
	type notice struct {
		eml   []byte
		owner string
		own   numberSet
	}
	var ns []notice
	for _, name := range m.files {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			b.Fatal(err)
		}
		ns = append(ns, notice{data, m.notices[name], m.numbers[name]})
	}
	// The draft's checker: on the manifest built from the case (its
	// quick set), not the one read back.
	built, err := buildManifest(context.Background(), db, filepath.Join(b.TempDir(), textsName))
	if err != nil {
		b.Fatal(err)
	}
	defer built.close()
	c := newChecker(built)
	if !c.quick {
		b.Fatal("the draft's checker is the quick one")
	}
	var spec emlSpec
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, n := range ns {
			if r := c.checkBuilt(n.eml, &spec, n.owner, n.own); len(r) != 0 {
				b.Fatal(r)
			}
		}
	}
	b.ReportMetric(float64(len(ns))*float64(b.N)/b.Elapsed().Seconds(), "notices/s")
}
