package ingest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkParseChunk: one worker of the Go reader parsing a chunk of
// 16,384 canonical lines into a record batch, lines as benchingest's
// mixed file writes them (times with Z and offsets, text on one in five).
func BenchmarkParseChunk(b *testing.B) {
	m := canonicalMappingForTest(b, "")
	base := time.Date(2026, 8, 27, 0, 0, 0, 0, time.UTC)
	zones := []*time.Location{time.UTC, time.FixedZone("", 2*3600), time.FixedZone("", -5*3600)}
	var c arrowChunk
	for i := range arrowChunkLines {
		ts := base.Add(time.Duration(i) * 250 * time.Millisecond).In(zones[i%3])
		end := ts.Add(time.Duration(500+i%7000) * time.Millisecond)
		line := fmt.Sprintf(`{"request_id":"req-%d","ts":"%s","end_ts":"%s","tenant_id":"tenant-%d","model":"glm-5.3","prompt_tokens":%d,"completion_tokens":%d,"status":200,"prefill_instance":"prefill-%d","decode_instance":"decode-%d"`,
			i, ts.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), i*7919%500, 100+i*104729%900000, 1+i%2000, i%8, i%4)
		if i%5 == 0 {
			line += fmt.Sprintf(`,"prompt_text":"summarise the quarterly figures for account %d","response_text":"the figures show a steady rise in usage"`, i)
		}
		c.buf = append(c.buf, line+"}"...)
		c.ends = append(c.ends, len(c.buf))
		c.lines = append(c.lines, int64(i+1))
	}
	judge := judgeJSONL(m, fileInstance{})
	rb := newRowBuilder(&poolAllocator{})
	defer rb.release()
	var long longLines
	var anyLong atomic.Bool
	b.SetBytes(int64(len(c.buf)))
	for b.Loop() {
		c.rejects, c.ids = nil, nil
		rb.parse(&c, 7, m, judge, &long, &anyLong)
		if c.rec.NumRows() != arrowChunkLines {
			b.Fatalf("%d rows, want %d", c.rec.NumRows(), arrowChunkLines)
		}
		c.rec.Release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*arrowChunkLines), "ns/line")
}
