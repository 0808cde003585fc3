package textmatch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/queries"
)

// How a caller compares responses with prompts, on one connection (the
// steps share temporary tables):
//
//  1. fill the temp table text_responses(row_id) with the responses;
//  2. Prepare: their fingerprints (text_resp_fps), a lower bound of how
//     many tenants' prompts hold each (text_spec, counted on fingerprints),
//     and those that can carry weight (text_rare_fps);
//  3. create the temp table text_candidates(response_row_id, source_row_id)
//     with the caller's own rules (which prompts may be sources), joining
//     text_rare_fps with the prompts' fingerprints on hash;
//  4. MeasureCandidates: the exact tenant count of every shingle the pairs
//     share (text_prompt_shingles), then the strength of every candidate pair, into the temp table
//     text_matches(response_row_id, source_row_id, shingles, run, rare, strong).
//
// The analysis and the sweep differ only in steps 1 and 3.

// Prepare runs step 2 on conn.
func Prepare(ctx context.Context, conn *sql.Conn, th Thresholds) error {
	for _, q := range []struct {
		name string
		args []any
	}{{"evidence_06_params_table", nil}, {"evidence_07_params", []any{th.CommonTenants}},
		{"evidence_10_resp_fps", nil}, {"evidence_11_spec", nil}, {"evidence_12_rare_fps", nil}} {
		if _, err := conn.ExecContext(ctx, queries.Get(q.name), q.args...); err != nil {
			return fmt.Errorf("textmatch: %s: %w", q.name, err)
		}
	}
	return nil
}

// MeasureStats says what Measure did.
type MeasureStats struct {
	Candidates, Strong int64
}

type pairKey struct{ resp, src int64 }

// MeasureCandidates runs step 4 on conn: it reads the candidates' texts once, hashes
// them, counts how many tenants' prompts hold each shingle the pairs share
// (exactly, on text_prompt_shingles), and measures every pair.
func MeasureCandidates(ctx context.Context, conn *sql.Conn, th Thresholds) (*MeasureStats, error) {
	st := &MeasureStats{}
	var pairs []pairKey
	type respText struct {
		sh    []uint64
		own   *Prompt
		model string
	}
	texts := map[int64]respText{}
	prompts := map[int64]*Prompt{}
	read := func(name string, args []any, f func(rec arrow.RecordBatch) error) error {
		return readArrow(ctx, conn, name, args, f)
	}
	err := func() error {
		if err := read("evidence_15_candidates", nil, func(rec arrow.RecordBatch) error {
			a, e1 := int64Col(rec, 0)
			b, e2 := int64Col(rec, 1)
			if err := errors.Join(e1, e2); err != nil {
				return err
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				pairs = append(pairs, pairKey{a.Value(i), b.Value(i)})
			}
			return nil
		}); err != nil {
			return err
		}
		if len(pairs) == 0 {
			return nil
		}
		isResp := map[int64]bool{}
		for _, p := range pairs {
			isResp[p.resp] = true
		}
		isSrc := map[int64]bool{}
		for _, p := range pairs {
			isSrc[p.src] = true
		}
		var sh, words []uint64
		return read("evidence_14_texts", nil, func(rec arrow.RecordBatch) error {
			ids, e1 := int64Col(rec, 0)
			pt, e2 := stringCol(rec, 1)
			rt, e3 := stringCol(rec, 2)
			mc, e4 := stringCol(rec, 3)
			if err := errors.Join(e1, e2, e3, e4); err != nil {
				return err
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				id := ids.Value(i)
				var p *Prompt
				if !pt.IsNull(i) {
					sh, words = Shingles(pt.Value(i), nil, words)
					p = NewPrompt(sh)
				}
				if isSrc[id] && p != nil {
					prompts[id] = p
				}
				if isResp[id] && !rt.IsNull(i) {
					sh, words = Shingles(rt.Value(i), nil, words)
					texts[id] = respText{sh, p, strings.Clone(mc.Value(i))} // the batch is released after this call
				}
			}
			return nil
		})
	}()
	if err != nil {
		return nil, err
	}

	// The shingles the pairs share, outside each response's own prompt: the
	// only ones whose weight depends on how many tenants hold them.
	shared := map[string]map[uint64]bool{}
	var buf []uint64
	for _, pk := range pairs {
		r, ok := texts[pk.resp]
		p := prompts[pk.src]
		if !ok || p == nil {
			continue
		}
		buf = NewResponse(r.sh, r.own, nil).Shared(p, buf[:0])
		if len(buf) == 0 {
			continue
		}
		m := shared[r.model]
		if m == nil {
			m = map[uint64]bool{}
			shared[r.model] = m
		}
		for _, h := range buf {
			m[h] = true
		}
	}
	common, err := commonShingles(ctx, conn, shared, read)
	if err != nil {
		return nil, err
	}
	resp := make(map[int64]*Response, len(texts))
	for id, r := range texts {
		resp[id] = NewResponse(r.sh, r.own, common[r.model])
	}

	st.Candidates = int64(len(pairs))
	out := make([]Strength, len(pairs))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(pairs); i += workers {
				r, p := resp[pairs[i].resp], prompts[pairs[i].src]
				if r != nil && p != nil {
					out[i] = Measure(r, p)
				}
			}
		}()
	}
	wg.Wait()

	alloc := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "response_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "source_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "shingles", Type: arrow.PrimitiveTypes.Int32},
		{Name: "run", Type: arrow.PrimitiveTypes.Int32},
		{Name: "rare", Type: arrow.PrimitiveTypes.Int32},
		{Name: "strong", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	b := array.NewRecordBuilder(alloc, schema)
	defer b.Release()
	var recs []arrow.RecordBatch
	n := 0
	for i, p := range pairs {
		s := out[i]
		if s.Shingles == 0 {
			continue
		}
		strong := s.Strong(th)
		if strong {
			st.Strong++
		}
		b.Field(0).(*array.Int64Builder).Append(p.resp)
		b.Field(1).(*array.Int64Builder).Append(p.src)
		b.Field(2).(*array.Int32Builder).Append(int32(s.Shingles))
		b.Field(3).(*array.Int32Builder).Append(int32(s.Run))
		b.Field(4).(*array.Int32Builder).Append(int32(s.Rare))
		b.Field(5).(*array.BooleanBuilder).Append(strong)
		if n++; n%(1<<16) == 0 {
			recs = append(recs, b.NewRecordBatch())
		}
	}
	recs = append(recs, b.NewRecordBatch())
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err := registerAndRun(ctx, conn, []view{{"arrow_text_matches", "evidence_16_matches", "evidence_16b_drop_matches_view", schema, recs}}); err != nil {
		return nil, err
	}
	return st, nil
}

// commonShingles returns, per model, the shingles of shared that the
// prompts of at least common_tenants distinct tenants of that model hold.
func commonShingles(ctx context.Context, conn *sql.Conn, shared map[string]map[uint64]bool,
	read func(string, []any, func(arrow.RecordBatch) error) error) (map[string]map[uint64]bool, error) {
	common := map[string]map[uint64]bool{}
	if len(shared) == 0 {
		return common, nil
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "model", Type: arrow.BinaryTypes.String},
		{Name: "hash", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	var recs []arrow.RecordBatch
	n := 0
	for _, model := range slices.Sorted(maps.Keys(shared)) {
		for h := range shared[model] {
			b.Field(0).(*array.StringBuilder).Append(model)
			b.Field(1).(*array.Int64Builder).Append(int64(h))
			if n++; n%(1<<16) == 0 {
				recs = append(recs, b.NewRecordBatch())
			}
		}
	}
	recs = append(recs, b.NewRecordBatch())
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err := registerAndRun(ctx, conn, []view{{"arrow_text_shared", "evidence_14b_shared", "evidence_14c_drop_shared_view", schema, recs}}); err != nil {
		return nil, err
	}
	err := read("evidence_14d_common", nil, func(rec arrow.RecordBatch) error {
		mc, e1 := stringCol(rec, 0)
		hc, e2 := int64Col(rec, 1)
		if err := errors.Join(e1, e2); err != nil {
			return err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			model := strings.Clone(mc.Value(i)) // the batch is released after this call
			m := common[model]
			if m == nil {
				m = map[uint64]bool{}
				common[model] = m
			}
			m[uint64(hc.Value(i))] = true
		}
		return nil
	})
	return common, err
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
