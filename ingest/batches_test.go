package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoReaderBatchesAreRowGroups: a file of short lines reaches DuckDB in
// batches of a row group each after its first (smaller) chunk, so that
// the ordered insert writes them as they come; a file of long lines in
// chunks of at most arrowLongChunkBytes, never a row group's worth held.
func TestGoReaderBatchesAreRowGroups(t *testing.T) {
	line := func(i int, text string) string {
		return fmt.Sprintf(`{"request_id":"req-%d","ts":"2026-08-27T%02d:%02d:%02dZ","end_ts":null,"tenant_id":"tenant-%d","model":"glm-5.3","prompt_tokens":%d,"completion_tokens":3,"status":200,"prefill_instance":"prefill-0","decode_instance":"decode-%d"%s}`+"\n",
			i, i/3600%24, i/60%60, i%60, i%500, 100+i, i%4, text)
	}
	cases := []struct {
		name  string
		lines int
		text  string
		check func(t *testing.T, batches []int64)
	}{
		{"short lines", 2*arrowChunkLines + 5000, "", func(t *testing.T, batches []int64) {
			full := 0
			for i, n := range batches {
				switch {
				case n == arrowChunkLines:
					full++
				case i != 0 && i != len(batches)-1:
					t.Errorf("batch %d of %d has %d rows, want a row group (%d)", i+1, len(batches), n, arrowChunkLines)
				}
			}
			if full < 1 {
				t.Errorf("no batch of a row group: %v", batches)
			}
		}},
		{"long lines", 300, `,"prompt_text":"` + strings.Repeat("the quarterly figures ", 4000) + `"`, func(t *testing.T, batches []int64) {
			most := int64(arrowLongChunkBytes/(22*4000)) + 1
			for i, n := range batches {
				if n > most {
					t.Errorf("batch %d has %d lines of 88 KB, want at most %d (%d bytes a chunk)", i+1, n, most, arrowLongChunkBytes)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i := range tc.lines {
				b.WriteString(line(i, tc.text))
			}
			path := writeFile(t, filepath.Join(t.TempDir(), "requests.jsonl.gz"), b.String())
			var batches []int64
			testHookBatch = func(rows int64) { batches = append(batches, rows) }
			defer func() { testHookBatch = nil }()
			db := openCase(t)
			if _, err := Run(context.Background(), db, nil, []string{path}, Options{}); err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, n := range batches {
				sum += n
			}
			if sum != int64(tc.lines) {
				t.Fatalf("the Go reader's batches hold %d rows, want %d (%v)", sum, tc.lines, batches)
			}
			if got := count(t, db, `SELECT count(*) FROM requests`); got != int64(tc.lines) {
				t.Fatalf("%d rows loaded, want %d", got, tc.lines)
			}
			tc.check(t, batches)
		})
	}
}

// TestGoReaderGivesUpWithItsChunksInFlight: when the Go reader gives a
// file up (too many rejects to hold) while its producer waits for one of
// its few chunks to come back, the load still ends (the file is read by
// the next reader): the chunk that failed is never given back.
func TestGoReaderGivesUpWithItsChunksInFlight(t *testing.T) {
	defer func(n int64) { maxHeldRejects = n }(maxHeldRejects)
	maxHeldRejects = 256 << 10
	// 88 KB lines, each rejected (a time that is not one): chunks of 8
	// MiB, more of them than the pipeline may hold.
	text := strings.Repeat("the quarterly figures ", 4000)
	var b strings.Builder
	n := 2 * arrowLongChunkBytes * arrowMaxChunks(arrowWorkers()) / (22 * 4000)
	for i := range n {
		fmt.Fprintf(&b, `{"request_id":"req-%d","ts":"not a time","end_ts":null,"tenant_id":"t","model":"m","prompt_tokens":1,"completion_tokens":1,"status":200,"prefill_instance":"p","decode_instance":"d","prompt_text":"%s"}`+"\n", i, text)
	}
	path := writeFile(t, filepath.Join(t.TempDir(), "requests.jsonl.gz"), b.String())
	db := openCase(t)
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), db, nil, []string{path}, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the load of a file the Go reader gives up did not end in 2 minutes")
	}
	if got := count(t, db, `SELECT count(*) FROM requests`); got != 0 {
		t.Fatalf("%d rows loaded, want 0", got)
	}
	if got := count(t, db, `SELECT count(*) FROM rejected_rows`); got != int64(n) {
		t.Fatalf("%d rejects, want %d", got, n)
	}
}
