package casedb

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestColumn: a column of the wanted type comes back as it; any other is
// an error naming the reader, the column, its type and the type wanted.
func TestColumn(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Int64}, {Name: "request_id", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{7, 8}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"r-7", "r-8"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()

	ids, err := Column[*array.Int64](rec, 0, "reader")
	if err != nil || ids.Value(1) != 8 {
		t.Fatalf("int64 column: %v", err)
	}
	rids, err := Column[StringColumn](rec, 1, "reader")
	if err != nil || rids.Value(0) != "r-7" {
		t.Fatalf("string column: %v", err)
	}
	for _, tc := range []struct {
		get  func() error
		want string
	}{
		{func() error { _, err := Column[StringColumn](rec, 0, "reader: q1"); return err }, "reader: q1: column row_id is int64, want casedb.StringColumn"},
		{func() error { _, err := Column[*array.Int32](rec, 1, "reader: q2"); return err }, "reader: q2: column request_id is utf8, want *array.Int32"},
	} {
		if err := tc.get(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
