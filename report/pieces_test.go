package report

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A Parquet file read in pieces of whole row groups gives the rows and
// the batches of one query reading it all (the Arrow exports are written
// from these batches).
func TestParquetPieces(t *testing.T) {
	db, _ := newCase(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.parquet")
	// 10,000 rows in row groups of 3,000: batches of 2,048 end at each group.
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT i, 'r' || i AS s FROM range(10000) t(i) ORDER BY i)
		TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 3000)`, path)); err != nil {
		t.Fatal(err)
	}
	read := func(qs []string) (batches []int64, vals []string) {
		for _, q := range qs {
			if err := arrowQuery(ctx, db, q, func(*arrow.Schema) error { return nil }, func(rec arrow.RecordBatch) error {
				batches = append(batches, rec.NumRows())
				for r := 0; r < int(rec.NumRows()); r++ {
					vals = append(vals, fmt.Sprint(rec.Column(0).(*array.Int64).Value(r), rec.Column(1).(*array.String).Value(r)))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return batches, vals
	}
	tb := table{}.exported(path, "")
	wantB, wantV := read([]string{tb.sql})
	if len(wantV) != 10000 {
		t.Fatalf("read %d rows, want 10000", len(wantV))
	}
	var groups int64
	if err := db.QueryRow("SELECT count(DISTINCT row_group_id) FROM parquet_metadata('" + path + "')").Scan(&groups); err != nil {
		t.Fatal(err)
	}
	if groups < 3 {
		t.Fatalf("%d row groups: too few to read in pieces", groups)
	}
	defer func(n int64) { pieceRows = n }(pieceRows)
	for _, n := range []int64{1, 3000, 5999, 6000, 9000, 1 << 20} {
		pieceRows = n
		qs, err := tb.pieces(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 && len(qs) != int(groups) {
			t.Errorf("pieces of 1 row: %d queries, want one a row group (%d)", len(qs), groups)
		}
		gotB, gotV := read(qs)
		if !reflect.DeepEqual(gotB, wantB) || !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("pieces of %d rows (%d queries): batches %v, want %v (rows equal: %v)", n, len(qs), gotB, wantB, reflect.DeepEqual(gotV, wantV))
		}
	}
}
