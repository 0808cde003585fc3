package casedb

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
)

// StringColumn is what every Arrow string array type offers (DuckDB hands
// out strings, large strings or string views).
type StringColumn interface {
	arrow.Array
	Value(int) string
}

// Column is column i of a record read back from the case as the Arrow
// array type T (*array.Int64, StringColumn, ...), or an error that names
// the reader (where), the column, its type and T: a query whose result
// does not have the types its reader expects is a bug, said plainly.
func Column[T arrow.Array](rec arrow.RecordBatch, i int, where string) (T, error) {
	c, ok := rec.Column(i).(T)
	if !ok {
		return c, fmt.Errorf("%s: column %s is %s, want %s", where, rec.ColumnName(i), rec.Column(i).DataType(), reflect.TypeFor[T]())
	}
	return c, nil
}
