package textmatch

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchRows is how many rows an Arrow record batch handed to DuckDB holds.
const batchRows = 1 << 16

// batcher builds the Arrow record batches of one registered view: append a
// row's fields to b.b's builders, then call row.
type batcher struct {
	b    *array.RecordBuilder
	recs []arrow.RecordBatch
	rows int
}

func newBatcher(schema *arrow.Schema) *batcher {
	return &batcher{b: array.NewRecordBuilder(memory.NewGoAllocator(), schema)}
}

// row ends a row; every batchRows rows make a batch.
func (b *batcher) row() {
	if b.rows++; b.rows%batchRows == 0 {
		b.recs = append(b.recs, b.b.NewRecordBatch())
	}
}

// finish returns the batches, the last one (maybe empty) included.
func (b *batcher) finish() []arrow.RecordBatch {
	b.recs = append(b.recs, b.b.NewRecordBatch())
	return b.recs
}

// release frees the builder and the batches.
func (b *batcher) release() {
	for _, r := range b.recs {
		r.Release()
	}
	b.recs = nil
	b.b.Release()
}
