package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"github.com/leakmap/leakmap/casedb"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
)

// arrowQuery runs q through the driver's Arrow API, which reads big results
// several times faster than rows.Scan: schema gets the result's schema
// first (an empty result has no batch to take it from), fn each batch.
func arrowQuery(ctx context.Context, db *sql.DB, q string, schema func(*arrow.Schema) error, fn func(arrow.RecordBatch) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		defer rr.Release()
		if err := schema(rr.Schema()); err != nil {
			return err
		}
		for rr.Next() {
			if err := fn(rr.RecordBatch()); err != nil {
				return err
			}
		}
		return rr.Err()
	})
}

// arrowValue returns row i of a column as the scanner would: string,
// int64, time.Time (UTC), bool, or nil for NULL.
func arrowValue(col arrow.Array, i int) (any, error) {
	if col.IsNull(i) {
		return nil, nil
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.StringView:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Uint64:
		return int64(a.Value(i)), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC(), nil
	case *array.Date32:
		return a.Value(i).ToTime().UTC(), nil
	}
	return nil, fmt.Errorf("column type %s not handled", col.DataType())
}
