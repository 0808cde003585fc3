package textmatch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/internal/memwatch"
	"github.com/leakmap/leakmap/queries"
)

// IndexStats says what Update did.
type IndexStats struct {
	Rows         int64 // rows whose texts were fingerprinted now
	Fingerprints int64
	Stale        int64 // rows gone or changed since they were fingerprinted
	// UpToDate: requests and text_indexed were as the last complete update
	// left them (text_index_state), so no row was joined or read.
	UpToDate bool
	Elapsed  time.Duration
}

// chunkRows is how many pending rows are read, hashed and inserted at a
// time (one transaction each): memory stays flat whatever the case's size.
// A chunk's fingerprints are held once in Go, as the Arrow batches DuckDB
// reads (over the workers' own slices), well under 1 KB per row with text:
// 100,000 rows keep that under 100 MB beside DuckDB's own memory_limit (up
// to 3 GiB).
var chunkRows int64 = 100_000

// Update fingerprints the logged texts of every row not fingerprinted yet
// (text_fingerprints, text_indexed): a second run after new log files
// hashes only the new rows. It uses two connections of db, one reading
// and hashing, the other inserting (one when db allows no more).
func Update(ctx context.Context, db *sql.DB, logger *slog.Logger) (*IndexStats, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t0 := time.Now()
	st := &IndexStats{}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("textmatch: %w", err)
	}
	defer conn.Close()
	exec := func(name string, args ...any) error { return execQuery(ctx, conn, name, args...) }
	// The state of requests and text_indexed, against the one the last
	// complete update recorded: the same, and nothing is new or stale.
	if err := exec("evidence_00e_state_now"); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.Background(), queries.Get("evidence_17b_drop_state_now"))
	var same bool
	if err := conn.QueryRowContext(ctx, queries.Get("evidence_00f_up_to_date")).Scan(&same); err != nil {
		return nil, fmt.Errorf("textmatch: evidence_00f_up_to_date: %w", err)
	}
	if same {
		st.UpToDate = true
		st.Elapsed = time.Since(t0)
		logger.Info("fingerprinted logged texts", "rows", 0, "fingerprints", 0,
			"stale", 0, "up_to_date", true, "elapsed", st.Elapsed.Round(time.Millisecond))
		return st, nil
	}
	// The memos of tenant counts hold for the fingerprints they were made
	// with: forget them before those change.
	for _, q := range []string{"evidence_00g_forget_state", "evidence_00h_forget_spec_rows",
		"evidence_00h_forget_spec_memo", "evidence_00h_forget_common_memo"} {
		if err := exec(q); err != nil {
			return nil, err
		}
	}
	if err := conn.QueryRowContext(ctx, queries.Get("evidence_00_stale_count")).Scan(&st.Stale); err != nil {
		return nil, fmt.Errorf("textmatch: evidence_00_stale_count: %w", err)
	}
	if st.Stale > 0 {
		if err := exec("evidence_01_drop_stale"); err != nil {
			return nil, err
		}
		if err := exec("evidence_02_drop_stale_rows"); err != nil {
			return nil, err
		}
	}
	for _, q := range []string{"evidence_02c_tenant_models", "evidence_03_pending"} {
		if err := exec(q); err != nil {
			return nil, err
		}
	}
	defer conn.ExecContext(context.Background(), queries.Get("evidence_17_drop_temp"))
	bounds, err := readInt64s(arrowReader(ctx, conn), "evidence_08_pending_bounds", []any{chunkRows})
	if err != nil {
		return nil, err
	}
	// Each chunk is inserted on a second connection while the next is read
	// and hashed on this one: the insert (DuckDB's append of the
	// fingerprints) and the hashing took about half the time each, one
	// after the other. One insert at a time, in chunk order, each in its
	// own transaction, so a crash still leaves whole chunks only.
	// A pool held to one connection (db.SetMaxOpenConns(1)) would wait
	// forever for a second: there each insert runs on conn, in turn.
	ins, overlap := conn, len(bounds) > 1 && db.Stats().MaxOpenConnections != 1
	if overlap {
		if ins, err = db.Conn(ctx); err != nil {
			return nil, fmt.Errorf("textmatch: %w", err)
		}
		defer ins.Close()
	}
	insert := func(i int, cb *chunkBatches) error {
		err := cb.insert(ctx, ins)
		cb.release()
		if err == nil {
			memwatch.Step(ctx, logger, "textmatch step", "step", "fingerprinted chunk", "chunk", i, "rows", cb.rows.rows)
		}
		return err
	}
	var inserting chan error // the previous chunk's insert, until waited for
	wait := func() error {
		if inserting == nil {
			return nil
		}
		err := <-inserting
		inserting = nil
		return err
	}
	defer wait() // an early return still waits for its insert
	for i := range bounds {
		lo, hi := rangeAt(bounds, i)
		cb, err := hashChunk(ctx, conn, lo, hi)
		if err = errors.Join(err, wait()); err != nil {
			cb.release()
			return nil, err
		}
		st.Rows += int64(cb.rows.rows)
		st.Fingerprints += int64(cb.fp.rows)
		if !overlap {
			if err := insert(i, cb); err != nil {
				return nil, err
			}
			continue
		}
		inserting = make(chan error, 1)
		go func(i int, cb *chunkBatches, done chan<- error) { done <- insert(i, cb) }(i, cb, inserting)
	}
	if err := wait(); err != nil {
		return nil, err
	}
	if err := exec("evidence_05c_record_state"); err != nil {
		return nil, err
	}
	st.Elapsed = time.Since(t0)
	logger.Info("fingerprinted logged texts", "rows", st.Rows, "fingerprints", st.Fingerprints,
		"stale", st.Stale, "elapsed", st.Elapsed.Round(time.Millisecond))
	return st, nil
}

// hashChunk reads the pending prompts with row_id in [lo, hi) and returns
// their fingerprints as Arrow batches, hashed on every CPU while DuckDB
// streams the texts. The caller releases them, also on error.
func hashChunk(ctx context.Context, conn *sql.Conn, lo, hi int64) (*chunkBatches, error) {
	cb := &chunkBatches{}
	err := fanOut(ctx, conn, "evidence_09_pending_texts", []any{lo, hi}, func() func(arrow.RecordBatch) (*hashed, error) {
		var hw hashWorker
		return hw.hash
	}, cb.add)
	return cb, err
}

// fanOut runs the query q on conn and hands its Arrow batches to one
// worker per CPU, each made by newWorker (with its own scratch space);
// collect gets every result, one at a time, on one goroutine. A batch is
// released once worked.
func fanOut[R any](ctx context.Context, conn *sql.Conn, q string, args []any, newWorker func() func(arrow.RecordBatch) (R, error), collect func(R)) error {
	batches := make(chan arrow.RecordBatch, 2)
	results := make(chan R, 2)
	var werr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		work := newWorker()
		go func() {
			defer wg.Done()
			for rec := range batches {
				res, err := work(rec)
				rec.Release()
				if err != nil {
					mu.Lock()
					werr = errors.Join(werr, err)
					mu.Unlock()
					continue
				}
				results <- res
			}
		}()
	}
	collected := make(chan struct{})
	go func() {
		for r := range results {
			collect(r)
		}
		close(collected)
	}()
	rerr := casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, queries.Get(q), args...)
		if err != nil {
			return fmt.Errorf("textmatch: %s: %w", q, err)
		}
		defer rr.Release()
		for rr.Next() {
			rec := rr.RecordBatch()
			rec.Retain()
			batches <- rec
		}
		if err := rr.Err(); err != nil {
			return fmt.Errorf("textmatch: %s: %w", q, err)
		}
		return nil
	})
	close(batches)
	wg.Wait()
	close(results)
	<-collected
	return errors.Join(rerr, werr)
}

// hashWorker is one worker's scratch space, and what it learnt of the
// batches before: how many fingerprints a text makes, to size the next
// batch's slices once instead of growing them.
type hashWorker struct {
	sh, words []uint64
	pos       []int32
	perRow    float64
}

// hash fingerprints one batch of pending prompts (row_id, row_hash, prompt,
// tm).
func (hw *hashWorker) hash(rec arrow.RecordBatch) (*hashed, error) {
	ids, e1 := casedb.Column[*array.Int64](rec, 0, "textmatch")
	hashes, e2 := casedb.Column[*array.Uint64](rec, 1, "textmatch")
	pt, e3 := casedb.Column[casedb.StringColumn](rec, 2, "textmatch")
	tms, e4 := casedb.Column[*array.Int32](rec, 3, "textmatch")
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return nil, err
	}
	// evidence_02c numbers every pair before the prompts are read: a row
	// without a number would be left out of every tenant count.
	if tms.NullN() > 0 {
		for i := 0; i < tms.Len(); i++ {
			if tms.IsNull(i) {
				return nil, fmt.Errorf("textmatch: row_id %d: its (model, tenant_id) has no number in text_tenant_models", ids.Value(i))
			}
		}
	}
	return &hashed{
		fp:      hw.fingerprint(ids, tms, pt),
		row:     slices.Clone(ids.Int64Values()),
		rowHash: slices.Clone(hashes.Uint64Values()),
	}, nil
}

// fingerprint returns the fingerprints of every text of col that is not
// NULL, with the row_id of ids and the tm of tms beside it (none when tms
// is nil: a response's): the hashes at the positions Winnow picks of the
// text's shingles, in order (a hash picked twice is there twice).
func (hw *hashWorker) fingerprint(ids *array.Int64, tms *array.Int32, col casedb.StringColumn) fingerprints {
	n := ids.Len()
	var f fingerprints
	f.make(int(hw.perRow*float64(n)*1.2)+16, tms != nil)
	for i := 0; i < n; i++ {
		if col.IsNull(i) {
			continue
		}
		hw.sh, hw.words = Shingles(col.Value(i), hw.sh[:0], hw.words)
		hw.pos = Winnow(hw.sh, hw.pos[:0])
		id := ids.Value(i)
		for _, p := range hw.pos {
			f.row = append(f.row, id)
			f.hash = append(f.hash, int64(hw.sh[p]))
		}
		if tms != nil {
			tm := tms.Value(i)
			for range hw.pos {
				f.tm = append(f.tm, tm)
			}
		}
	}
	if n > 0 {
		hw.perRow = float64(len(f.row)) / float64(n)
	}
	return f
}

var (
	fingerprintSchema = arrow.NewSchema([]arrow.Field{
		{Name: "row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "hash", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tm", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	indexedSchema = arrow.NewSchema([]arrow.Field{
		{Name: "row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "row_hash", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
)

// hashed is what a worker made of one batch of prompts, column by column:
// their fingerprints, the fingerprinted rows.
type hashed struct {
	fp      fingerprints
	row     []int64
	rowHash []uint64
}

// fingerprints are texts' fingerprints, column by column.
type fingerprints struct {
	row  []int64
	hash []int64
	tm   []int32
}

func (f *fingerprints) make(n int, withTM bool) {
	f.row, f.hash = make([]int64, 0, n), make([]int64, 0, n)
	if withTM {
		f.tm = make([]int32, 0, n)
	}
}

// chunkBatches are one chunk's fingerprints and fingerprinted rows as
// Arrow batches over the workers' own slices (no copy: the slices are the
// batches' buffers, held until release).
type chunkBatches struct {
	fp   tableBatches
	rows tableBatches
}

type tableBatches struct {
	recs []arrow.RecordBatch
	rows int
}

func (t *tableBatches) add(schema *arrow.Schema, n int, cols ...arrow.Array) {
	t.recs = append(t.recs, array.NewRecordBatch(schema, cols, int64(n)))
	for _, c := range cols {
		c.Release() // the batch holds them
	}
	t.rows += n
}

func (cb *chunkBatches) add(r *hashed) {
	cb.fp.add(fingerprintSchema, len(r.fp.row), int64Array(r.fp.row), int64Array(r.fp.hash), int32Array(r.fp.tm))
	cb.rows.add(indexedSchema, len(r.row), int64Array(r.row), uint64Array(r.rowHash))
}

// The arrays of a worker's slices, zero-copy (no validity bitmap: no NULLs).
func int64Array(v []int64) arrow.Array {
	return fixedArray(arrow.PrimitiveTypes.Int64, len(v), arrow.Int64Traits.CastToBytes(v))
}

func uint64Array(v []uint64) arrow.Array {
	return fixedArray(arrow.PrimitiveTypes.Uint64, len(v), arrow.Uint64Traits.CastToBytes(v))
}

func int32Array(v []int32) arrow.Array {
	return fixedArray(arrow.PrimitiveTypes.Int32, len(v), arrow.Int32Traits.CastToBytes(v))
}

// fixedArray is a fixed-width array of n values over b.
func fixedArray(t arrow.DataType, n int, b []byte) arrow.Array {
	d := array.NewData(t, n, []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0)
	defer d.Release() // the array holds its own reference
	return array.MakeFromData(d)
}

func (cb *chunkBatches) release() {
	for _, t := range []*tableBatches{&cb.fp, &cb.rows} {
		t.release()
	}
}

func (t *tableBatches) release() {
	for _, r := range t.recs {
		r.Release()
	}
	t.recs = nil
}

// insert adds the chunk's fingerprints and the rows they cover in one
// transaction: a crash leaves no row half fingerprinted.
func (cb *chunkBatches) insert(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("textmatch: begin: %w", err)
	}
	err := registerAndRun(ctx, conn, []view{
		{"arrow_text_fingerprints", "evidence_04_insert_fingerprints", "evidence_04b_drop_fingerprints_view", fingerprintSchema, cb.fp.recs},
		{"arrow_text_indexed", "evidence_05_insert_indexed", "evidence_05b_drop_indexed_view", indexedSchema, cb.rows.recs},
	})
	if err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("textmatch: commit: %w", err)
	}
	return nil
}

type view struct {
	name, query, drop string
	schema            *arrow.Schema
	recs              []arrow.RecordBatch
}

// registerAndRun registers each Arrow view on conn and runs its query
// while it is registered; the view is dropped right after.
func registerAndRun(ctx context.Context, conn *sql.Conn, views []view, args ...any) error {
	return casedb.WithArrow(conn, func(ar *duckdb.Arrow, dc driver.Conn) error {
		for _, v := range views {
			if len(v.recs) == 0 {
				continue // nothing to add
			}
			rr, err := array.NewRecordReader(v.schema, v.recs)
			if err != nil {
				return fmt.Errorf("textmatch: %s: %w", v.name, err)
			}
			release, err := ar.RegisterView(rr, v.name)
			if err != nil {
				rr.Release()
				return fmt.Errorf("textmatch: register %s: %w", v.name, err)
			}
			ex, ok := dc.(driver.ExecerContext)
			if !ok {
				release()
				rr.Release()
				return errors.New("textmatch: driver connection cannot exec")
			}
			_, err = ex.ExecContext(ctx, queries.Get(v.query), nil)
			// The registration is a view in the case database pointing at
			// this process's memory: drop it before anyone else can read it.
			if _, derr := ex.ExecContext(ctx, queries.Get(v.drop), nil); derr != nil {
				err = errors.Join(err, derr)
			}
			release()
			rr.Release()
			if err != nil {
				return fmt.Errorf("textmatch: %s: %w", v.query, err)
			}
		}
		return nil
	})
}
