package analysis

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/leakmap/leakmap/queries"
)

// spill is a file of rows of int64 columns that the replay writes as it
// finds pairs and DuckDB reads back through an Arrow view: at 100M
// requests the pairs run to tens of millions, more than the Go side should
// hold beside DuckDB's memory_limit. A nil spill has no rows.
type spill struct {
	f    *os.File
	w    *bufio.Writer
	cols int
	rows int64
	buf  []byte
}

// newSpill creates an empty spill file of cols columns in dir.
func newSpill(dir, name string, cols int) (*spill, error) {
	f, err := os.CreateTemp(dir, "leakmap-"+name+"-*.bin")
	if err != nil {
		return nil, fmt.Errorf("analysis: spill file: %w", err)
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<20), cols: cols}, nil
}

// write appends rows given column by column, row after row.
func (s *spill) write(vals []int64) error {
	if len(vals)%s.cols != 0 {
		return fmt.Errorf("analysis: spill %s: %d values for %d columns", s.f.Name(), len(vals), s.cols)
	}
	s.buf = s.buf[:0]
	for _, v := range vals {
		s.buf = binary.LittleEndian.AppendUint64(s.buf, uint64(v))
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("analysis: spill %s: %w", s.f.Name(), err)
	}
	s.rows += int64(len(vals) / s.cols)
	return nil
}

// Close removes the file.
func (s *spill) Close() error {
	if s == nil {
		return nil
	}
	return errors.Join(s.f.Close(), os.Remove(s.f.Name()))
}

// reader reads the rows back from the start as Arrow batches of schema
// (one int64 field per column; a nullable field's values <= 0 are NULL).
func (s *spill) reader(schema *arrow.Schema) (*spillReader, error) {
	r := &spillReader{schema: schema, b: array.NewRecordBuilder(memory.NewGoAllocator(), schema)}
	r.refs.Store(1)
	if s == nil {
		return r, nil
	}
	if schema.NumFields() != s.cols {
		return nil, fmt.Errorf("spill %s has %d columns, schema %d", s.f.Name(), s.cols, schema.NumFields())
	}
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	r.src, r.left, r.name = bufio.NewReaderSize(s.f, 1<<20), s.rows, s.f.Name()
	return r, nil
}

// spillBatch is how many rows one Arrow batch of a spill holds.
const spillBatch = 1 << 16

// spillReader is an array.RecordReader over a spill file, one batch in
// memory at a time.
type spillReader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	b      *array.RecordBuilder
	src    *bufio.Reader
	name   string
	left   int64
	sent   bool // a batch was given (an empty spill gives one empty batch)
	cur    arrow.RecordBatch
	err    error
	row    []byte
	fields []*array.Int64Builder
}

func (r *spillReader) Retain() { r.refs.Add(1) }

func (r *spillReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.b.Release()
	}
}

func (r *spillReader) Schema() *arrow.Schema { return r.schema }

func (r *spillReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || (r.left == 0 && r.sent) {
		return false
	}
	cols := r.schema.NumFields()
	if r.row == nil {
		r.row = make([]byte, 8*cols)
		for c := range cols {
			fb, ok := r.b.Field(c).(*array.Int64Builder)
			if !ok {
				r.err = fmt.Errorf("spill %s: field %s is not int64", r.name, r.schema.Field(c).Name)
				return false
			}
			r.fields = append(r.fields, fb)
		}
	}
	n := min(r.left, spillBatch)
	for _, fb := range r.fields {
		fb.Reserve(int(n))
	}
	for range n {
		if _, err := io.ReadFull(r.src, r.row); err != nil {
			r.err = fmt.Errorf("spill %s: %w", r.name, err)
			return false
		}
		for c, fb := range r.fields {
			v := int64(binary.LittleEndian.Uint64(r.row[8*c:]))
			if v <= 0 && r.schema.Field(c).Nullable {
				fb.AppendNull()
			} else {
				fb.Append(v)
			}
		}
	}
	r.left -= n
	r.sent = true
	r.cur = r.b.NewRecordBatch()
	return true
}

func (r *spillReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch (the interface's deprecated name).
func (r *spillReader) Record() arrow.RecordBatch { return r.cur }

func (r *spillReader) Err() error { return r.err }

// spillDir is where the analysis spills: DuckDB's temp_directory (beside
// the case) when set, else the system's. done removes the folder if this
// call made it and it is still empty.
func spillDir(ctx context.Context, conn *sql.Conn) (dir string, done func(), err error) {
	const q = "analysis_05b_temp_directory"
	if err := conn.QueryRowContext(ctx, queries.Get(q)).Scan(&dir); err != nil {
		return "", nil, fmt.Errorf("analysis: %s: %w", q, err)
	}
	if dir == "" {
		return os.TempDir(), func() {}, nil
	}
	if _, err := os.Stat(dir); err == nil {
		return dir, func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("analysis: spill folder: %w", err)
	}
	return dir, func() { os.Remove(dir) }, nil
}
