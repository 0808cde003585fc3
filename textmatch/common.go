package textmatch

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/internal/hashset"
	"github.com/leakmap/leakmap/internal/memwatch"
	"github.com/leakmap/leakmap/queries"
)

// hitRows is how many fingerprinted rows' prompts are read again at a time
// to find the new shared shingles in them: a range's hits are held in Go
// until DuckDB takes them (16 bytes each; a prompt holds few of the shared
// shingles, a template's prompts the template's).
var hitRows int64 = 100_000

// stepGCPercent is Go's GOGC while the prompts are read again.
const stepGCPercent = 25

var hitSchema = arrow.NewSchema([]arrow.Field{
	{Name: "row_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "hash", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// countNewShared counts, exactly, how many distinct tenants' prompts of the
// model hold each shingle of text_shared_new (n rows), into
// text_common_memo. The case keeps the prompts' fingerprints, not every
// shingle of them (that table was a third of a case), so the prompts are
// read again and shingled on every CPU, a range of rows at a time; the
// shingles found in the set, once per prompt (text_prompt_hits), are
// counted by DuckDB.
func countNewShared(ctx context.Context, conn *sql.Conn, logger *slog.Logger, n int64) error {
	exec := func(name string, args ...any) error { return execQuery(ctx, conn, name, args...) }
	read := arrowReader(ctx, conn)
	// This step holds the analysis's peak memory (100M requests: DuckDB
	// near its limit while the set and the hits are most of Go's heap).
	// Both are pointer-free, so collecting more often costs little: at
	// GOGC 25 Go's heap grows to 1.25 times what is live between
	// collections instead of twice (docs/performance.md, session 21). A
	// GOGC the user set is kept.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(stepGCPercent))
	}
	hashes, err := readInt64s(read, "evidence_14c1c_shared_new_hashes", nil)
	if err != nil {
		return err
	}
	set := newHashSet(len(hashes))
	for _, h := range hashes {
		set.add(uint64(h))
	}
	var models []string
	if err := read("evidence_14c1c2_shared_new_models", nil, func(rec arrow.RecordBatch) error {
		c, err := casedb.Column[casedb.StringColumn](rec, 0, "textmatch")
		if err != nil {
			return err
		}
		for i := 0; i < c.Len(); i++ {
			models = append(models, strings.Clone(c.Value(i))) // the batch is released after this call
		}
		return nil
	}); err != nil {
		return err
	}
	if err := exec("evidence_14c1d_hits_table"); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), queries.Get("evidence_14c2b_drop_hits_table"))
	bounds, err := readInt64s(read, "evidence_14c1e_prompt_bounds", []any{hitRows})
	if err != nil {
		return err
	}
	var hits int64
	t := time.Now()
	for i := range bounds {
		lo, hi := rangeAt(bounds, i)
		var tb tableBatches
		err := fanOut(ctx, conn, "evidence_14c1f_prompt_texts", []any{lo, hi, models}, func() func(arrow.RecordBatch) (*hitList, error) {
			w := &hitWorker{set: set}
			return w.hits
		}, func(h *hitList) {
			tb.add(hitSchema, len(h.row), int64Array(h.row), int64Array(h.hash))
		})
		if err == nil {
			err = registerAndRun(ctx, conn, []view{{"arrow_text_prompt_hits", "evidence_14c1g_insert_hits", "evidence_14c1h_drop_hits_view", hitSchema, tb.recs}})
		}
		hits += int64(tb.rows)
		tb.release()
		if err != nil {
			return err
		}
	}
	memwatch.Step(ctx, logger, "textmatch step", "step", "prompts read again for the shared shingles", "ranges", len(bounds),
		"shingles", n, "hits", hits, "elapsed", time.Since(t).Round(time.Millisecond))
	// The set (a quarter of a GiB at 100M requests) is unreachable now
	// (no worker is left): hand it back to the OS before DuckDB's count,
	// or the process holds both.
	debug.FreeOSMemory()
	t = time.Now()
	if err := exec("evidence_14c2_count_new"); err != nil {
		return err
	}
	memwatch.Step(ctx, logger, "textmatch step", "query", "evidence_14c2_count_new", "elapsed", time.Since(t).Round(time.Millisecond))
	return nil
}

// hitWorker finds, in one batch of prompts (row_id, prompt_text), the
// shingles of the set, each once per prompt.
type hitWorker struct {
	set       *hashSet // read only: shared by the workers
	seen      hashset.Stamped
	sh, words []uint64
}

// hitList is one batch's hits, column by column.
type hitList struct {
	row, hash []int64
}

func (w *hitWorker) hits(rec arrow.RecordBatch) (*hitList, error) {
	ids, e1 := casedb.Column[*array.Int64](rec, 0, "textmatch")
	pt, e2 := casedb.Column[casedb.StringColumn](rec, 1, "textmatch")
	if err := errors.Join(e1, e2); err != nil {
		return nil, err
	}
	res := &hitList{}
	for i := 0; i < int(rec.NumRows()); i++ {
		if pt.IsNull(i) {
			continue
		}
		w.sh, w.words = Shingles(pt.Value(i), w.sh[:0], w.words)
		fresh := true
		for _, h := range w.sh {
			if !w.set.has(h) {
				continue
			}
			if fresh {
				// Most prompts hold none of the set: the prompt's own
				// set is emptied only for those that do.
				w.seen.Reset(len(w.sh))
				fresh = false
			}
			if w.seen.Add(h) {
				res.row = append(res.row, ids.Value(i))
				res.hash = append(res.hash, int64(h))
			}
		}
	}
	return res, nil
}

// hashSet is a set of shingle hashes, built once and then read by every
// worker: open addressing on the hash's low bits (the hashes are mixed),
// 0 marking an empty slot, at most half full. 8 bytes a slot: ~130 MB for
// the ~7M shared shingles of 100M requests. Almost every lookup is of a
// shingle not in the set, so a bitmap of the high bits, 1/16 of the
// table's size, answers most of them from memory the caches keep.
type hashSet struct {
	keys    []uint64
	mask    uint64
	bits    []uint64 // bit h>>shift is set for every h in the set
	shift   uint
	hasZero bool
}

func newHashSet(n int) *hashSet {
	size := 64
	for size < 2*n {
		size *= 2
	}
	// 4 bits a slot, 8 or more a member: under 1 in 8 of the misses
	// reach the table.
	nbits, shift := 4*size, uint(64)
	for v := nbits; v > 1; v >>= 1 {
		shift--
	}
	return &hashSet{keys: make([]uint64, size), mask: uint64(size - 1), bits: make([]uint64, nbits/64), shift: shift}
}

func (s *hashSet) add(h uint64) {
	if h == 0 {
		s.hasZero = true
		return
	}
	b := h >> s.shift
	s.bits[b>>6] |= 1 << (b & 63)
	for i := h & s.mask; ; i = (i + 1) & s.mask {
		switch s.keys[i] {
		case 0:
			s.keys[i] = h
			return
		case h:
			return
		}
	}
}

func (s *hashSet) has(h uint64) bool {
	if h == 0 {
		return s.hasZero
	}
	if b := h >> s.shift; s.bits[b>>6]&(1<<(b&63)) == 0 {
		return false
	}
	for i := h & s.mask; ; i = (i + 1) & s.mask {
		switch s.keys[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}
