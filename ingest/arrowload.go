package ingest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/queries"
)

// The Go reader of a canonical JSON Lines file: the checked path's own
// reading (lines, blank lines, the byte order mark, lines over the limit, a
// broken stream, a torn last line) and its own judge of every record, with
// quickCanonical reading the usual record without allocating; the rows go
// to DuckDB as Arrow record batches, typed and numbered, in one INSERT that
// computes the row hash as the other paths do. It decompresses the file
// once and pipelines over the cores: decompress and split | parse (one
// chunk of lines per worker) | DuckDB's insert. DuckDB's own reader needed
// the file read a second time in Go beside it to number the lines, and SQL
// checks on every value.

// arrowChunkLines is how many lines a worker parses into one record batch:
// DuckDB's row group. Its ordered insert writes a batch of at least a row
// group as it comes, and copies smaller ones into row groups again (their
// statistics, dictionaries and strings done twice): batches of 16,384
// lines cost an eighth more of the whole ingest's CPU.
const arrowChunkLines = 122_880

// arrowChunkBytes ends a chunk early: a clean canonical line takes about
// 300 bytes, 35 MiB a row group of them. A file starts with chunks of
// arrowLongChunkBytes, and keeps them while its lines are too long for a
// row group to fit: DuckDB copies such a batch into row groups whatever
// its size, and big ones only hold memory (300,000 lines of 5 KB: 1.8 GiB
// peak and 10% more time at 48 MiB a chunk from the start, 1.4 GiB as
// before this way).
const (
	arrowChunkBytes     = 48 << 20
	arrowLongChunkBytes = 8 << 20
)

// arrowWorkers is how many workers parse: half the cores, at most four
// (about three chunks in flight a worker). DuckDB's threads, which store
// the rows, take most of the CPU: on two cores, a second worker beside
// them took no less time and 120 MiB more (the mixed 5M-row file, four
// alternating runs: 7.9-8.8 s against 7.8-8.7 s with one).
func arrowWorkers() int { return min(max(1, runtime.GOMAXPROCS(0)/2), 4) }

// maxHeldRejects bounds the rejected lines' text held until the insert
// ends (rejected_rows is appended to after it, on the same connection);
// a file with more takes the other paths.
var maxHeldRejects int64 = 64 << 20 // a variable for the tests

var errTooManyRejects = errors.New("too many rejected lines for the Go reader")

var requestsArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "row_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "request_id", Type: arrow.BinaryTypes.String},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "end_ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "tenant_id", Type: arrow.BinaryTypes.String},
	{Name: "model", Type: arrow.BinaryTypes.String},
	{Name: "prompt_tokens", Type: arrow.PrimitiveTypes.Int64},
	{Name: "completion_tokens", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "status", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "prefill_instance", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "decode_instance", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "prompt_text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "response_text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "line", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// arrowMaxChunks is how many chunks a file's pipeline may hold at once.
func arrowMaxChunks(workers int) int { return workers + 2 }

// arrowChunk is a run of non-blank lines and, once parsed, their rows as a
// record batch and their rejects, in file order (kinds: true a row).
type arrowChunk struct {
	buf     []byte
	ends    []int // end of each line in buf
	lines   []int64
	rec     arrow.RecordBatch
	rows    []bool // per line: a row (true) or the next of rejects
	rejects []outcome
	ids     []uint64 // per row: duckHash of its request_id
}

// rowBuilder writes rows straight into the buffers of a record batch of
// requestsArrowSchema (pooled memory, given back when DuckDB releases the
// batch): Arrow's builders cost a fifth of a worker's time, in bounds
// checks, growth tests and a validity bit per value. A column gets a
// validity bitmap only at its first NULL (a batch's required columns and
// most others never have one).
type rowBuilder struct {
	mem       *poolAllocator
	n, rows   int // rows written, room for
	rowID     []int64
	line      []int64
	num       [nFields][]int64 // times (µs) and counts
	status    []int32
	off       [nFields][]int32 // text columns: offsets and bytes
	data      [nFields][]byte
	valid     [nFields][]byte // nil while the column has no NULL
	nulls     [nFields]int
	bufs      [][]byte     // the pooled buffers in use, by index
	dataHint  [nFields]int // bytes a column's text took per row in the last batch
	numIdx    [nFields]int
	rowIDIdx  int
	lineIdx   int
	statusIdx int
	offIdx    [nFields]int
	dataIdx   [nFields]int
	qs        quickState // the worker's quickParse, line to line
	q         quickRow   // the row being read, reused (only its set fields count)
}

func newRowBuilder(mem *poolAllocator) *rowBuilder { return &rowBuilder{mem: mem} }

// alloc takes a pooled buffer of n bytes, not zeroed, and returns its
// index: add writes every value of a row, NULLs' included, and null
// clears a bitmap it takes.
func (rb *rowBuilder) alloc(n int) int {
	rb.bufs = append(rb.bufs, rb.mem.take(n))
	return len(rb.bufs) - 1
}

func int64s(b []byte) []int64 { return arrow.Int64Traits.CastFromBytes(b) }
func int32s(b []byte) []int32 { return arrow.Int32Traits.CastFromBytes(b) }

// reset makes room for rows rows in fresh buffers.
func (rb *rowBuilder) reset(rows int) {
	rb.n, rb.rows, rb.bufs = 0, rows, rb.bufs[:0]
	rb.rowIDIdx, rb.lineIdx = rb.alloc(8*rows), rb.alloc(8*rows)
	rb.rowID, rb.line = int64s(rb.bufs[rb.rowIDIdx]), int64s(rb.bufs[rb.lineIdx])
	for f := range nFields {
		rb.valid[f], rb.nulls[f] = nil, 0
		switch fieldTypes[f] {
		case arrow.STRING:
			rb.offIdx[f] = rb.alloc(4 * (rows + 1))
			rb.off[f] = int32s(rb.bufs[rb.offIdx[f]])
			rb.off[f][0] = 0
			rb.dataIdx[f] = rb.alloc(max(64, rb.dataHint[f]*rows))
			rb.data[f] = rb.bufs[rb.dataIdx[f]][:0]
		case arrow.INT32:
			rb.statusIdx = rb.alloc(4 * rows)
			rb.status = int32s(rb.bufs[rb.statusIdx])
		default:
			rb.numIdx[f] = rb.alloc(8 * rows)
			rb.num[f] = int64s(rb.bufs[rb.numIdx[f]])
		}
	}
}

// fieldTypes are the Arrow types of the canonical fields' columns.
var fieldTypes = func() (t [nFields]arrow.Type) {
	for f := range nFields {
		t[f] = requestsArrowSchema.Field(1 + f).Type.ID()
	}
	return t
}()

// null marks row rb.n of column f NULL (add writes its value as zero).
func (rb *rowBuilder) null(f int) {
	if rb.valid[f] == nil {
		rb.valid[f] = rb.bufs[rb.alloc(int(bitutil.BytesForBits(int64(rb.rows))))]
		clear(rb.valid[f])
		bitutil.SetBitsTo(rb.valid[f], 0, int64(rb.n), true)
	}
	rb.nulls[f]++
}

// add appends one row, numbered with its line.
func (rb *rowBuilder) add(fileID, line int64, q *quickRow) {
	n := rb.n
	rb.rowID[n] = fileID<<32 | line
	rb.line[n] = line
	for f := range nFields {
		has := q.has(f)
		switch fieldTypes[f] {
		case arrow.STRING:
			if has {
				d := rb.data[f]
				if len(d)+len(q.text[f]) > cap(d) {
					nb := rb.mem.take(max(2*cap(d), len(d)+len(q.text[f])))[:len(d)]
					copy(nb, d)
					rb.mem.Free(rb.bufs[rb.dataIdx[f]])
					rb.bufs[rb.dataIdx[f]], d = nb[:cap(nb)], nb
				}
				rb.data[f] = append(d, q.text[f]...)
			}
			rb.off[f][n+1] = int32(len(rb.data[f]))
		case arrow.INT32:
			var v int32 // 0 for a NULL
			if has {
				v = int32(q.num[f])
			}
			rb.status[n] = v
		case arrow.TIMESTAMP:
			var v int64
			if has {
				v = q.time[f]
			}
			rb.num[f][n] = v
		default:
			var v int64
			if has {
				v = q.num[f]
			}
			rb.num[f][n] = v
		}
		switch {
		case !has:
			rb.null(f)
		case rb.valid[f] != nil:
			bitutil.SetBit(rb.valid[f], n)
		}
	}
	rb.n++
}

// batch wraps the rows written as a record batch; its buffers go back to
// the pool when the batch is released.
func (rb *rowBuilder) batch() arrow.RecordBatch {
	n := rb.n
	buf := func(i, size int) *memory.Buffer {
		return memory.NewBufferWithAllocator(rb.bufs[i][:size], rb.mem)
	}
	bitmap := func(f int) *memory.Buffer {
		if rb.valid[f] == nil {
			return nil
		}
		return memory.NewBufferWithAllocator(rb.valid[f][:bitutil.BytesForBits(int64(n))], rb.mem)
	}
	cols := make([]arrow.Array, 0, 2+nFields)
	mk := func(t arrow.DataType, bufs []*memory.Buffer, nulls int) {
		d := array.NewData(t, n, bufs, nil, nulls, 0)
		for _, b := range bufs {
			if b != nil {
				b.Release() // d holds them
			}
		}
		cols = append(cols, array.MakeFromData(d))
		d.Release()
	}
	mk(requestsArrowSchema.Field(0).Type, []*memory.Buffer{nil, buf(rb.rowIDIdx, 8*n)}, 0)
	for f := range nFields {
		t := requestsArrowSchema.Field(1 + f).Type
		switch fieldTypes[f] {
		case arrow.STRING:
			if n > 0 {
				rb.dataHint[f] = len(rb.data[f])/n + 1
			}
			mk(t, []*memory.Buffer{bitmap(f), buf(rb.offIdx[f], 4*(n+1)), buf(rb.dataIdx[f], len(rb.data[f]))}, rb.nulls[f])
		case arrow.INT32:
			mk(t, []*memory.Buffer{bitmap(f), buf(rb.statusIdx, 4*n)}, rb.nulls[f])
		default:
			mk(t, []*memory.Buffer{bitmap(f), buf(rb.numIdx[f], 8*n)}, rb.nulls[f])
		}
	}
	mk(requestsArrowSchema.Field(13).Type, []*memory.Buffer{nil, buf(rb.lineIdx, 8*n)}, 0)
	rec := array.NewRecordBatch(requestsArrowSchema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	rb.bufs = rb.bufs[:0]
	return rec
}

// release gives back the buffers of a batch never made.
func (rb *rowBuilder) release() {
	for _, b := range rb.bufs {
		rb.mem.Free(b)
	}
	rb.bufs = rb.bufs[:0]
}

// parse fills c's record batch and rejects: quickParse where it can, else
// the checked path's judge.
func (rb *rowBuilder) parse(c *arrowChunk, fileID int64, m *Mapping, judge func([]byte, int64) outcome, long *longLines, anyLong *atomic.Bool) {
	start := 0
	c.rows = slices.Grow(c.rows[:0], len(c.lines))[:len(c.lines)]
	clear(c.rows)
	c.ids = slices.Grow(c.ids[:0], len(c.lines))
	rb.reset(len(c.lines))
	for i, end := range c.ends {
		b, line := c.buf[start:end], c.lines[i]
		start = end
		if anyLong.Load() {
			if why := long.reason(line); why != "" {
				c.rejects = append(c.rejects, outcome{line: line, reason: why, raw: rawText(b)})
				continue
			}
		}
		q := &rb.q
		q.set = 0
		if quickParse(b, m, q, &rb.qs) {
			rb.add(fileID, line, q)
			c.rows[i] = true
			c.ids = append(c.ids, duckHash(q.text[fRequestID]))
			continue
		}
		o := judge(b, line)
		if !o.ok {
			c.rejects = append(c.rejects, o)
			continue
		}
		q.set = 0
		for f := range nFields {
			if !q.put(f, o.v[f]) {
				panic(fmt.Sprintf("ingest: canonical value of type %T", o.v[f]))
			}
		}
		rb.add(fileID, line, q)
		c.rows[i] = true
		c.ids = append(c.ids, duckHash(q.text[fRequestID]))
	}
	c.rec = rb.batch()
}

// heldSink counts the rows and holds the rejects (behind the tornSink, so
// the last one may be marked torn) until the insert ends, and the rows'
// request_id hashes, for the duplicate search of a first file, up to
// maxHeldIDs of them (8 bytes a row; a longer file drops them and the
// search reads the ids back in SQL).
type heldSink struct {
	rows, bytes int64
	rejects     []outcome
	ids         *idBuckets
	idsDropped  bool
}

// maxHeldIDs bounds the request_id hashes held: 64 MiB.
const maxHeldIDs = 1 << 23

// addIDs keeps a chunk's request_id hashes.
func (h *heldSink) addIDs(ids []uint64) {
	switch {
	case h.idsDropped:
	case h.ids == nil:
		h.ids = &idBuckets{}
		fallthrough
	case h.ids.n+len(ids) <= maxHeldIDs:
		h.ids.add(ids)
	default:
		h.ids, h.idsDropped = nil, true
	}
}

func (h *heldSink) row(line int64, _ values) error {
	if line > maxLine {
		return fmt.Errorf("line %d: more lines than a file may have", line)
	}
	h.rows++
	return nil
}

func (h *heldSink) reject(line int64, reason, raw string) error {
	if h.bytes += int64(len(raw) + len(reason)); h.bytes > maxHeldRejects {
		return errTooManyRejects
	}
	h.rejects = append(h.rejects, outcome{line: line, reason: reason, raw: raw})
	return nil
}

func (h *heldSink) duplicateLine() {}

// chunkReader is the array.RecordReader DuckDB's insert pulls the record
// batches from, in file order, as the pipeline makes them.
type chunkReader struct {
	refs atomic.Int64
	recs chan arrow.RecordBatch
	cur  arrow.RecordBatch
	err  func() error
}

func (r *chunkReader) Retain()                        { r.refs.Add(1) }
func (r *chunkReader) Release()                       { r.refs.Add(-1) }
func (r *chunkReader) Schema() *arrow.Schema          { return requestsArrowSchema }
func (r *chunkReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *chunkReader) Record() arrow.RecordBatch      { return r.cur }
func (r *chunkReader) Err() error                     { return r.err() }
func (r *chunkReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	rec, ok := <-r.recs
	if !ok {
		return false
	}
	r.cur = rec
	return true
}

// arrowPipeline reads l.fi into record batches for r and the rejects into
// held; it returns when the file is read, or ctx is done, with the error
// that stopped it, and closes r.recs.
func (l *loader) arrowPipeline(ctx context.Context, recs chan<- arrow.RecordBatch, held *heldSink) (err error) {
	defer close(recs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := openContentWith(l.fi.path, l.fi.compression, l.prog.reader)
	if err != nil {
		return fmt.Errorf("%s: %w", l.fi.path, err)
	}
	defer rc.Close()
	end := &endReader{r: rc}
	ts := newTornSink(held, end)
	var long longLines
	var anyLong atomic.Bool
	judge := judgeJSONL(l.m, fileInstance{})
	workers := arrowWorkers()
	mem := &poolAllocator{}
	// Chunks go round, their lines' bytes, ends and numbers included:
	// fresh memory for every chunk cost page faults and collections (300
	// MB allocated for a 5M-row file when only the bytes went round).
	//
	// At most workers+2 chunks exist: the one being filled, one per worker
	// and one waiting for DuckDB to take its batch. More do not make the
	// load faster (DuckDB's insert is the slowest step, and two batches
	// wait for it in recs) and cost their memory's first touch: on the
	// 2-core VM of docs/performance.md a page fault costs about 11 us, and
	// five chunks of a 5M-row file's 35 MB were 80,000 of them.
	free := make(chan *arrowChunk, arrowMaxChunks(workers))
	made := 0
	chunkBytes := arrowLongChunkBytes // until a chunk shows short lines
	// The bytes the next chunk will hold, to size it once: a chunk grown
	// by append a quarter at a time from the last one's size to a row
	// group's (8 to 35 MB) left 100 MB of fresh memory behind it.
	want := 64 << 10
	next := func() (*arrowChunk, error) {
		var c *arrowChunk
		select {
		case c = <-free:
		default:
			if made < arrowMaxChunks(workers) {
				made++
				c = &arrowChunk{ends: make([]int, 0, 1024), lines: make([]int64, 0, 1024)}
				break
			}
			select {
			case c = <-free:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if cap(c.buf) < want-want/8 {
			c.buf = make([]byte, 0, want)
		}
		return c, nil
	}
	err = orderedWorkOn(ctx, workers,
		func(send func(*arrowChunk) error) error {
			cur, err := next()
			if err != nil {
				return err
			}
			produce := nonBlankLines(ctx, end, true, l.fi.maxLine, &long)
			err = produce(func(b []byte, line int64) error {
				if _, ok := long.m[line]; ok {
					anyLong.Store(true)
				}
				cur.buf = append(cur.buf, b...)
				cur.ends = append(cur.ends, len(cur.buf))
				cur.lines = append(cur.lines, line)
				if len(cur.lines) < arrowChunkLines && len(cur.buf) < chunkBytes {
					return nil
				}
				c := cur
				chunkBytes = arrowChunkBytes
				if int64(len(c.buf))*arrowChunkLines > int64(len(c.lines))*arrowChunkBytes {
					chunkBytes = arrowLongChunkBytes // this chunk's lines: a row group would not fit
				}
				// The next is filled to a row group or chunkBytes, at
				// this one's line lengths, and an eighth more.
				want = int(min(int64(chunkBytes), int64(len(c.buf))*arrowChunkLines/int64(len(c.lines))))
				want += want / 8
				// Sent before the next is taken: it may be the one freed.
				if err := send(c); err != nil {
					return err
				}
				var err error
				cur, err = next()
				return err
			})
			if err == nil && len(cur.lines) > 0 {
				err = send(cur)
			}
			return err
		},
		func() (func(*arrowChunk), func()) {
			rb := newRowBuilder(mem)
			return func(c *arrowChunk) {
				rb.parse(c, l.fileID, l.m, judge, &long, &anyLong)
			}, rb.release
		},
		func(c *arrowChunk) error {
			k := 0
			for i, row := range c.rows {
				var err error
				if row {
					err = ts.row(c.lines[i], values{})
				} else {
					o := c.rejects[k]
					k++
					err = ts.reject(o.line, o.reason, o.raw)
				}
				if err != nil {
					c.rec.Release()
					cancel() // the producer may wait for a chunk that will not come back
					return err
				}
			}
			held.addIDs(c.ids)
			if testHookBatch != nil {
				testHookBatch(c.rec.NumRows())
			}
			select {
			case recs <- c.rec:
			case <-ctx.Done():
				c.rec.Release()
				return ctx.Err()
			}
			// Everything the chunk held is now copied or DuckDB's.
			c.buf, c.ends, c.lines, c.rejects, c.ids, c.rec = c.buf[:0], c.ends[:0], c.lines[:0], c.rejects[:0], c.ids[:0], nil
			select {
			case free <- c:
			default:
			}
			return nil
		},
		func(c *arrowChunk) {
			if c.rec != nil {
				c.rec.Release()
			}
		})
	if err != nil {
		return err
	}
	if d := damageOf(rc); d != nil && d.err != nil {
		l.fi.damage = d.reason()
	}
	damage, err := tornOf(ts).finish(l.fi.damage != "")
	if l.fi.damage == "" {
		l.fi.damage = damage
	}
	return err
}

// arrowFast loads a canonical JSON Lines file through the Go reader, in
// two transactions (see fast). It reports false (the caller takes DuckDB's reader, then
// the checked path) when the reader cannot take the file: too many rejects
// to hold, or any error of its own.
func (l *loader) arrowFast(ctx context.Context) (bool, error) {
	if err := l.begin(ctx); err != nil {
		return false, err
	}
	damage := l.fi.damage
	giveUp := func(why error) (bool, error) {
		l.rollback()
		l.fi.damage = damage
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		l.logger.Debug("the Go reader cannot take the file", "file", l.fi.path, "err", why)
		return false, nil
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	held := &heldSink{}
	recs := make(chan arrow.RecordBatch, 2)
	var perr error
	piped := make(chan struct{})
	go func() {
		defer close(piped)
		perr = l.arrowPipeline(pctx, recs, held)
	}()
	reader := &chunkReader{recs: recs, err: func() error { return nil }}
	var inserted int64
	ierr := casedb.WithArrow(l.conn, func(ar *duckdb.Arrow, dc driver.Conn) error {
		release, err := ar.RegisterView(reader, "arrow_ingest_rows")
		if err != nil {
			return fmt.Errorf("register arrow_ingest_rows: %w", err)
		}
		defer release()
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("ingest: driver connection cannot exec")
		}
		done := l.timed("ingest_arrow_0_insert")
		res, err := ex.ExecContext(ctx, queries.Get("ingest_arrow_0_insert"), []driver.NamedValue{{Ordinal: 1, Value: l.fileID}})
		done()
		if err == nil {
			inserted, err = res.RowsAffected()
		}
		// The view points at this process's memory: it goes before anyone
		// else can read it.
		if _, derr := ex.ExecContext(ctx, queries.Get("ingest_arrow_1_drop_view"), nil); derr != nil {
			err = errors.Join(err, derr)
		}
		return err
	})
	cancel()
	for range recs { // a failed insert stops pulling: let the pipeline end
	}
	<-piped
	if reader.cur != nil {
		reader.cur.Release()
	}
	if ierr != nil || perr != nil {
		return giveUp(errors.Join(ierr, perr))
	}
	if inserted != held.rows {
		return giveUp(fmt.Errorf("inserted %d rows of %d", inserted, held.rows))
	}
	// The rows commit first, marked as loading, as on DuckDB's reader: the
	// duplicates deleted in the same transaction as a big insert made its
	// commit rewrite the rows (2.1 s against 0.14 s for 1M rows with 1,000
	// duplicates).
	if _, err := l.exec(ctx, "ingest_pending_add", l.fileID, l.fi.path); err != nil {
		return giveUp(err)
	}
	done := l.timed("commit_rows")
	if _, err := l.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return giveUp(fmt.Errorf("%s: commit rows: %w", l.fi.path, err))
	}
	done()
	if testHookAfterRows != nil {
		if err := testHookAfterRows(l.fi.path); err != nil {
			return false, err // a crash: nothing cleans up
		}
	}
	if err := l.finishHeld(ctx, held); err != nil {
		l.rollback()
		if derr := l.deleteRows(); derr != nil {
			err = errors.Join(err, derr)
		}
		return false, err
	}
	return true, nil
}

// finishHeld is the Go reader's second transaction: the rejects, then the
// duplicate search and the custody row.
func (l *loader) finishHeld(ctx context.Context, held *heldSink) error {
	if _, err := l.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	if len(held.rejects) > 0 {
		err := l.conn.Raw(func(dc any) error {
			a, err := duckdb.NewAppender(dc.(driver.Conn), "", "main", "rejected_rows")
			if err != nil {
				return fmt.Errorf("rejected_rows appender: %w", err)
			}
			for _, o := range held.rejects {
				if err := a.AppendRow(l.fileID, o.line, o.reason, o.raw); err != nil {
					a.Close()
					return err
				}
			}
			return a.Close()
		})
		if err != nil {
			return err
		}
	}
	if _, err := l.exec(ctx, "ingest_pending_done", l.fileID); err != nil {
		return err
	}
	rejected := int64(len(held.rejects))
	if held.ids != nil && int64(held.ids.n) == held.rows {
		l.ids = held.ids
	}
	held.ids = nil
	defer func() { l.ids = nil }()
	return l.finish(ctx, held.rows+rejected, held.rows, rejected, 0)
}

// poolAllocator is an Arrow allocator that keeps freed buffers for the
// next record batches (by capacity, powers of two): the batches DuckDB has
// read come back as the next ones are built.
type poolAllocator struct {
	mu   sync.Mutex
	free [48][][]byte
}

func sizeClass(n int) int {
	c := 6 // 64 bytes at least
	for 1<<c < n {
		c++
	}
	return c
}

func (a *poolAllocator) Allocate(n int) []byte {
	b := a.take(n)
	clear(b) // Arrow's builders take new memory as zeroed
	return b
}

// take is Allocate without the zeroing: for buffers whose every byte read
// is written first (a twentieth of a worker's time went to clearing them).
func (a *poolAllocator) take(n int) []byte {
	c := sizeClass(n)
	a.mu.Lock()
	if k := len(a.free[c]); k > 0 {
		b := a.free[c][k-1]
		a.free[c] = a.free[c][:k-1]
		a.mu.Unlock()
		return b[:n]
	}
	a.mu.Unlock()
	return make([]byte, n, 1<<c)
}

func (a *poolAllocator) Reallocate(n int, b []byte) []byte {
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		if n > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(n)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *poolAllocator) Free(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) != 1<<c {
		return // not one of ours
	}
	a.mu.Lock()
	if len(a.free[c]) < 64 {
		a.free[c] = append(a.free[c], b[:0])
	}
	a.mu.Unlock()
}
