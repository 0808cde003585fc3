package textmatch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/internal/memwatch"
	"github.com/leakmap/leakmap/queries"
)

// How a caller compares responses with prompts, on one connection (the
// steps share temporary tables):
//
//  1. fill the temp table text_responses(row_id) with the rows whose
//     responses to compare (a row without a logged response is skipped);
//  2. Prepare: their fingerprints (text_resp_fps, hashed from their texts
//     now: the case keeps the prompts' only), a lower bound of how
//     many tenants' prompts hold each (text_spec, counted on fingerprints,
//     kept when 2 or more; memoised in text_spec_memo), and those that can
//     carry weight (text_rare_fps);
//  3. create the temp table text_candidates(response_row_id, source_row_id)
//     with the caller's own rules (which prompts may be sources), joining
//     text_rare_fps with the prompts' fingerprints on hash;
//  4. MeasureCandidates: the exact tenant count of every shingle the pairs
//     share (on the prompts read again; memoised in text_common_memo), then
//     the strength of every candidate
//     pair, a chunk of responses at a time, into the temp table
//     text_matches(response_row_id, source_row_id, shingles, run, rare, strong).
//
// The analysis and the sweep differ only in steps 1 and 3.

// Prepare runs step 2 on conn. The tenant counts of the responses'
// fingerprints come from text_spec_memo when every response was compared
// before with the same fingerprints; else they are counted and kept there.
func Prepare(ctx context.Context, conn *sql.Conn, logger *slog.Logger, th Thresholds) error {
	if th.CommonTenants < 2 {
		// The counts kept are those of 2 tenants or more (fewer carry
		// weight alike under any common_tenants the incident file allows).
		return fmt.Errorf("textmatch: common_tenants %d, must be at least 2", th.CommonTenants)
	}
	exec := func(name string, args ...any) error {
		t := time.Now()
		if err := execQuery(ctx, conn, name, args...); err != nil {
			return err
		}
		memwatch.Step(ctx, logger, "textmatch step", "query", name, "elapsed", time.Since(t).Round(time.Millisecond))
		return nil
	}
	if err := errors.Join(exec("evidence_06_params_table"), exec("evidence_07_params", th.CommonTenants)); err != nil {
		return err
	}
	t := time.Now()
	if err := responseFingerprints(ctx, conn); err != nil {
		return err
	}
	memwatch.Step(ctx, logger, "textmatch step", "step", "response fingerprints", "elapsed", time.Since(t).Round(time.Millisecond))
	if err := errors.Join(exec("evidence_10_resp_fps"), exec("evidence_10b_drop_resp_hashes")); err != nil {
		return err
	}
	var known bool
	if err := conn.QueryRowContext(ctx, queries.Get("evidence_11a_spec_known")).Scan(&known); err != nil {
		return fmt.Errorf("textmatch: evidence_11a_spec_known: %w", err)
	}
	if known {
		if err := exec("evidence_11b_spec_from_memo"); err != nil {
			return err
		}
	} else {
		if err := exec("evidence_11_spec"); err != nil {
			return err
		}
		// The counts before the rows they cover, in one transaction.
		if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
			return fmt.Errorf("textmatch: begin: %w", err)
		}
		if err := errors.Join(exec("evidence_11c_memo_spec"), exec("evidence_11d_memo_rows")); err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return fmt.Errorf("textmatch: commit: %w", err)
		}
	}
	return exec("evidence_12_rare_fps")
}

// responseFingerprints fills the temp table text_resp_hashes with the
// fingerprints of the responses to compare (text_responses), hashed from
// their texts a range of rows at a time, as Update hashes the prompts.
// The case keeps the prompts' fingerprints only: a response is compared
// only as a trigger's or in a sweep, and storing every response's cost
// two fifths of the fingerprinting of a first analysis.
func responseFingerprints(ctx context.Context, conn *sql.Conn) error {
	if err := execQuery(ctx, conn, "evidence_09c_resp_hashes_table"); err != nil {
		return err
	}
	read := arrowReader(ctx, conn)
	bounds, err := readInt64s(read, "evidence_09d_resp_bounds", []any{chunkRows})
	if err != nil {
		return err
	}
	for i := range bounds {
		lo, hi := rangeAt(bounds, i)
		var fps tableBatches
		err := fanOut(ctx, conn, "evidence_09e_resp_texts", []any{lo, hi}, func() func(arrow.RecordBatch) (fingerprints, error) {
			var hw hashWorker
			return func(rec arrow.RecordBatch) (fingerprints, error) {
				ids, e1 := casedb.Column[*array.Int64](rec, 0, "textmatch")
				rt, e2 := casedb.Column[casedb.StringColumn](rec, 1, "textmatch")
				if err := errors.Join(e1, e2); err != nil {
					return fingerprints{}, err
				}
				return hw.fingerprint(ids, nil, rt), nil
			}
		}, func(f fingerprints) {
			fps.add(respHashSchema, len(f.row), int64Array(f.row), int64Array(f.hash))
		})
		if err == nil {
			err = registerAndRun(ctx, conn, []view{{"arrow_text_resp_hashes", "evidence_09f_insert_resp_hashes",
				"evidence_09g_drop_resp_hashes_view", respHashSchema, fps.recs}})
		}
		fps.release()
		if err != nil {
			return err
		}
	}
	return nil
}

var respHashSchema = arrow.NewSchema([]arrow.Field{
	{Name: "row_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "hash", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// MeasureStats says what Measure did.
type MeasureStats struct {
	Candidates, Strong int64
}

type pairKey struct{ resp, src int64 }

// measureChunkPairs is how many candidate pairs are read and measured at a
// time (cut at a response: all pairs of one response are in one chunk). A
// chunk holds its pairs and the shingles of their texts in Go (~1 KB a
// pair) and DuckDB the texts it reads: memory stays flat whatever the
// number of candidates (284,000 at 10M requests).
var measureChunkPairs = 1 << 16

// chunk is the candidate pairs of responses with row_id in [lo, hi), with
// the texts they need.
type chunk struct {
	lo, hi  int64
	pairs   []pairKey
	texts   map[int64]respText
	prompts map[int64]*Prompt // sources' prompts
}

type respText struct {
	sh    []uint64
	own   *Prompt
	model string
}

// MeasureCandidates runs step 4 on conn, a chunk of responses at a time, in
// two passes: the first collects the shingles the pairs share
// (text_shared), whose tenants are then counted once, exactly, on every
// prompt read again (countNewShared); the second reads each chunk again and measures its
// pairs into text_matches. The first pass runs from the last chunk to the
// first, so the first chunk is still loaded when the second pass begins
// (one chunk, as on most cases, is read once).
func MeasureCandidates(ctx context.Context, conn *sql.Conn, logger *slog.Logger, th Thresholds) (*MeasureStats, error) {
	st := &MeasureStats{}
	readConn := arrowReader(ctx, conn)
	read := func(name string, args []any, f func(rec arrow.RecordBatch) error) error {
		t := time.Now()
		err := readConn(name, args, f)
		memwatch.Step(ctx, logger, "textmatch step", "query", name, "elapsed", time.Since(t).Round(time.Millisecond))
		return err
	}
	exec := func(name string, args ...any) error { return execQuery(ctx, conn, name, args...) }
	bounds, err := readInt64s(read, "evidence_13_chunks", []any{measureChunkPairs})
	if err != nil {
		return nil, err
	}
	// The chunks read their texts from one table of the pairs' rows: each
	// read of requests itself scans every row's texts (30M requests: 6-9 s
	// a read, two reads a chunk).
	t := time.Now()
	if err := exec("evidence_13b_texts_table"); err != nil {
		return nil, err
	}
	memwatch.Step(ctx, logger, "textmatch step", "query", "evidence_13b_texts_table", "elapsed", time.Since(t).Round(time.Millisecond))
	if err := errors.Join(exec("evidence_14a_shared_table"), exec("evidence_15b_matches_table")); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.Background(), queries.Get("evidence_16c_drop_texts_table"))
	chunkAt := func(i int) (*chunk, error) {
		c := &chunk{}
		c.lo, c.hi = rangeAt(bounds, i)
		return c, c.load(read)
	}

	// Pass 1: the shingles the pairs share, outside each response's own
	// prompt: the only ones whose weight depends on how many tenants hold
	// them.
	var c *chunk
	anyShared := false
	for i := len(bounds) - 1; i >= 0; i-- {
		var err error
		if c, err = chunkAt(i); err != nil {
			return nil, err
		}
		st.Candidates += int64(len(c.pairs))
		b := newBatcher(sharedSchema)
		c.shared(b)
		anyShared = anyShared || b.rows > 0
		err = registerAndRun(ctx, conn, []view{{"arrow_text_shared", "evidence_14b_shared", "evidence_14c_drop_shared_view", sharedSchema, b.finish()}})
		b.release()
		if err != nil {
			return nil, err
		}
		memwatch.Step(ctx, logger, "textmatch step", "step", "shared shingles", "chunk", i, "pairs", len(c.pairs),
			"texts", len(c.texts), "prompts", len(c.prompts))
	}
	common := map[string]map[uint64]bool{}
	if anyShared {
		// Count the shingles not counted before with these fingerprints
		// (text_common_memo), then read the common ones from the memo.
		t := time.Now()
		if err := exec("evidence_14c1_shared_new"); err != nil {
			return nil, err
		}
		var n int64
		if err := conn.QueryRowContext(ctx, queries.Get("evidence_14c1b_shared_new_count")).Scan(&n); err != nil {
			return nil, fmt.Errorf("textmatch: evidence_14c1b_shared_new_count: %w", err)
		}
		memwatch.Step(ctx, logger, "textmatch step", "query", "evidence_14c1_shared_new", "new", n, "elapsed", time.Since(t).Round(time.Millisecond))
		if n > 0 {
			if err := countNewShared(ctx, conn, logger, n); err != nil {
				return nil, err
			}
		}
		if err := exec("evidence_14e_drop_shared_new"); err != nil {
			return nil, err
		}
		if err := read("evidence_14d_common", nil, func(rec arrow.RecordBatch) error {
			mc, e1 := casedb.Column[casedb.StringColumn](rec, 0, "textmatch")
			hc, e2 := casedb.Column[*array.Int64](rec, 1, "textmatch")
			if err := errors.Join(e1, e2); err != nil {
				return err
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				m := common[mc.Value(i)]
				if m == nil {
					m = map[uint64]bool{}
					common[strings.Clone(mc.Value(i))] = m // the batch is released after this call
				}
				m[uint64(hc.Value(i))] = true
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}

	// Pass 2: measure every pair.
	for i := range bounds {
		if i > 0 {
			var err error
			if c, err = chunkAt(i); err != nil {
				return nil, err
			}
		}
		b := newBatcher(matchSchema)
		st.Strong += c.measure(th, common, b)
		err := registerAndRun(ctx, conn, []view{{"arrow_text_matches", "evidence_16_matches", "evidence_16b_drop_matches_view", matchSchema, b.finish()}})
		b.release()
		if err != nil {
			return nil, err
		}
		memwatch.Step(ctx, logger, "textmatch step", "step", "measured", "chunk", i, "pairs", len(c.pairs))
	}
	return st, nil
}

var sharedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "model", Type: arrow.BinaryTypes.String},
	{Name: "hash", Type: arrow.PrimitiveTypes.Int64},
}, nil)

var matchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "response_row_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "source_row_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "shingles", Type: arrow.PrimitiveTypes.Int32},
	{Name: "run", Type: arrow.PrimitiveTypes.Int32},
	{Name: "rare", Type: arrow.PrimitiveTypes.Int32},
	{Name: "strong", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

// load reads the chunk's pairs, in order, and hashes their texts.
func (c *chunk) load(read readFunc) error {
	args := []any{c.lo, c.hi}
	if err := read("evidence_15_candidates", args, func(rec arrow.RecordBatch) error {
		a, e1 := casedb.Column[*array.Int64](rec, 0, "textmatch")
		b, e2 := casedb.Column[*array.Int64](rec, 1, "textmatch")
		if err := errors.Join(e1, e2); err != nil {
			return err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			c.pairs = append(c.pairs, pairKey{a.Value(i), b.Value(i)})
		}
		return nil
	}); err != nil {
		return err
	}
	c.texts, c.prompts = map[int64]respText{}, map[int64]*Prompt{}
	if len(c.pairs) == 0 {
		return nil
	}
	isSrc := map[int64]bool{}
	for _, p := range c.pairs {
		isSrc[p.src] = true
	}
	var sh, words []uint64
	return read("evidence_14_texts", args, func(rec arrow.RecordBatch) error {
		ids, e1 := casedb.Column[*array.Int64](rec, 0, "textmatch")
		pt, e2 := casedb.Column[casedb.StringColumn](rec, 1, "textmatch")
		rt, e3 := casedb.Column[casedb.StringColumn](rec, 2, "textmatch")
		mc, e4 := casedb.Column[casedb.StringColumn](rec, 3, "textmatch")
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			return err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			id := ids.Value(i)
			var p *Prompt
			if !pt.IsNull(i) {
				sh, words = Shingles(pt.Value(i), sh[:0], words)
				p = NewPrompt(sh)
			}
			if isSrc[id] && p != nil {
				c.prompts[id] = p
			}
			// The query gives a response text only to the chunk's responses.
			if !rt.IsNull(i) {
				rs, w := Shingles(rt.Value(i), nil, words)
				words = w
				c.texts[id] = respText{slices.Clip(rs), p, strings.Clone(mc.Value(i))} // the batch is released after this call
			}
		}
		return nil
	})
}

// shared appends to b, per response model, the shingles the chunk's pairs
// share outside each response's own prompt, each once per model.
func (c *chunk) shared(b *batcher) {
	seen := map[string]map[uint64]bool{}
	var buf []uint64
	for _, pk := range c.pairs {
		r, ok := c.texts[pk.resp]
		p := c.prompts[pk.src]
		if !ok || p == nil {
			continue
		}
		buf = NewResponse(r.sh, r.own, nil).Shared(p, buf[:0])
		m := seen[r.model]
		if m == nil {
			m = map[uint64]bool{}
			seen[r.model] = m
		}
		for _, h := range buf {
			if !m[h] {
				m[h] = true
				b.b.Field(0).(*array.StringBuilder).Append(r.model)
				b.b.Field(1).(*array.Int64Builder).Append(int64(h))
				b.row()
			}
		}
	}
}

// measure measures the chunk's pairs on every CPU and appends to b the
// pairs that share a shingle, in the chunk's order; it returns how many
// are strong.
func (c *chunk) measure(th Thresholds, common map[string]map[uint64]bool, b *batcher) int64 {
	resp := make(map[int64]*Response, len(c.texts))
	for id, r := range c.texts {
		resp[id] = NewResponse(r.sh, r.own, common[r.model])
	}
	out := make([]Strength, len(c.pairs))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(c.pairs); i += workers {
				r, p := resp[c.pairs[i].resp], c.prompts[c.pairs[i].src]
				if r != nil && p != nil {
					out[i] = Measure(r, p)
				}
			}
		}()
	}
	wg.Wait()
	var strong int64
	for i, p := range c.pairs {
		s := out[i]
		if s.Shingles == 0 {
			continue
		}
		ok := s.Strong(th)
		if ok {
			strong++
		}
		b.b.Field(0).(*array.Int64Builder).Append(p.resp)
		b.b.Field(1).(*array.Int64Builder).Append(p.src)
		b.b.Field(2).(*array.Int32Builder).Append(int32(s.Shingles))
		b.b.Field(3).(*array.Int32Builder).Append(int32(s.Run))
		b.b.Field(4).(*array.Int32Builder).Append(int32(s.Rare))
		b.b.Field(5).(*array.BooleanBuilder).Append(ok)
		b.row()
	}
	return strong
}

// execQuery runs the query name on conn.
func execQuery(ctx context.Context, conn *sql.Conn, name string, args ...any) error {
	if _, err := conn.ExecContext(ctx, queries.Get(name), args...); err != nil {
		return fmt.Errorf("textmatch: %s: %w", name, err)
	}
	return nil
}

// rangeAt is the i-th range of rows that bounds cut (each query of bounds
// gives the first row_id of every range): [bounds[i], bounds[i+1]), the
// last one open-ended.
func rangeAt(bounds []int64, i int) (lo, hi int64) {
	if i+1 < len(bounds) {
		return bounds[i], bounds[i+1]
	}
	return bounds[i], math.MaxInt64
}

// readFunc runs the query name with args and hands f each record batch.
type readFunc func(name string, args []any, f func(arrow.RecordBatch) error) error

// arrowReader is the readFunc of readArrow on conn.
func arrowReader(ctx context.Context, conn *sql.Conn) readFunc {
	return func(name string, args []any, f func(arrow.RecordBatch) error) error {
		return readArrow(ctx, conn, name, args, f)
	}
}

// readInt64s reads, with read, the first column (BIGINT) of every row the
// query name returns.
func readInt64s(read readFunc, name string, args []any) ([]int64, error) {
	var out []int64
	err := read(name, args, func(rec arrow.RecordBatch) error {
		c, err := casedb.Column[*array.Int64](rec, 0, "textmatch")
		if err != nil {
			return err
		}
		out = append(out, c.Int64Values()...)
		return nil
	})
	return out, err
}

// readArrow runs the query name on conn and hands f each record batch.
func readArrow(ctx context.Context, conn *sql.Conn, name string, args []any, f func(rec arrow.RecordBatch) error) error {
	return casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, queries.Get(name), args...)
		if err != nil {
			return fmt.Errorf("textmatch: %s: %w", name, err)
		}
		defer rr.Release()
		for rr.Next() {
			if err := f(rr.RecordBatch()); err != nil {
				return fmt.Errorf("textmatch: %s: %w", name, err)
			}
		}
		if err := rr.Err(); err != nil {
			return fmt.Errorf("textmatch: %s: %w", name, err)
		}
		return nil
	})
}
