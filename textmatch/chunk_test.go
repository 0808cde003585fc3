package textmatch_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakmap/leakmap/internal/simcase"
	"github.com/leakmap/leakmap/simulate"
	"github.com/leakmap/leakmap/sweep"
	"github.com/leakmap/leakmap/textmatch"
)

// TestChunksMeasureAlike: the candidates measured a few pairs at a time
// (many chunks, each read and hashed twice) give the same matches, counts
// and sweep.csv as one chunk.
func TestChunksMeasureAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation end to end")
	}
	ctx := context.Background()
	cfg := simulate.DefaultConfig()
	cfg.Requests = 12000
	dir, db := simcase.Ingested(t, cfg)
	run := func(chunk int, out string) (*sweep.Summary, []byte) {
		t.Helper()
		defer func(old int) { *textmatch.MeasureChunkPairs = old }(*textmatch.MeasureChunkPairs)
		*textmatch.MeasureChunkPairs = chunk
		sum, err := sweep.Run(ctx, db, nil, sweep.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := sweep.WriteCSV(ctx, db, nil, filepath.Join(dir, out)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, out, "sweep.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return sum, b
	}
	one, oneCSV := run(1<<30, "one")
	if one.Candidates < 20 || one.Matches == 0 {
		t.Fatalf("too few candidates (%d) or no match (%d): nothing is tested", one.Candidates, one.Matches)
	}
	many, manyCSV := run(3, "many")
	if many.Candidates != one.Candidates || many.Matches != one.Matches ||
		many.WeakRare != one.WeakRare || many.WeakRun != one.WeakRun {
		t.Errorf("chunks of 3 pairs: candidates %d matches %d weak %d/%d; one chunk: %d %d %d/%d",
			many.Candidates, many.Matches, many.WeakRare, many.WeakRun,
			one.Candidates, one.Matches, one.WeakRare, one.WeakRun)
	}
	if !bytes.Equal(manyCSV, oneCSV) {
		t.Errorf("sweep.csv differs between chunks of 3 pairs and one chunk")
	}
}
