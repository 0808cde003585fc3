package analysis

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
)

// pairRow is a (source, trigger) pair found by the replay, with the source's
// stale slots.
type pairRow struct {
	source, trigger int64
	slots           int64
}

type triggerSlotRow struct {
	trigger, unknown int64
}

type replayOutput struct {
	pairs                       []pairRow
	slots                       []triggerSlotRow
	replayed, warnings, shrinks int64
	instances                   int
	queryTime, readTime         time.Duration // first batch, last batch (since the query started)
	workerTime                  time.Duration // the replay itself, summed over instances
	err                         error
}

// stringColumn is what every Arrow string array type offers.
type stringColumn interface {
	arrow.Array
	Value(int) string
}

func int64Col(rec arrow.RecordBatch, i int, query string) (*array.Int64, error) {
	c, ok := rec.Column(i).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("analysis: %s: column %s is %s, want int64", query, rec.ColumnName(i), rec.Column(i).DataType())
	}
	return c, nil
}

func stringCol(rec arrow.RecordBatch, i int, query string) (stringColumn, error) {
	c, ok := rec.Column(i).(stringColumn)
	if !ok {
		return nil, fmt.Errorf("analysis: %s: column %s is %s, want a string", query, rec.ColumnName(i), rec.Column(i).DataType())
	}
	return c, nil
}

// runReplay reads every replayable row through Arrow, instance by instance
// (the query orders by instance), and replays each decode pool; a worker
// replays one instance while the next is read.
func runReplay(ctx context.Context, conn *sql.Conn, inc *incident.Incident, timeline []incident.CapacityChange, logStartUS int64) (*replayOutput, error) {
	const q = "analysis_06_replay_rows"
	out := &replayOutput{}
	policy := inc.Contamination.Allocator
	logStart := usToTime(logStartUS)

	type job struct {
		name string
		in   instanceReplay
	}
	jobs := make(chan job, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	// Decode instances are independent: one worker per CPU replays while the
	// reader fills the next instance.
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				t := time.Now()
				res := replayOne(j.in, policy)
				mu.Lock()
				if res.err != nil && out.err == nil {
					out.err = fmt.Errorf("analysis: replay of %s: %w", j.name, res.err)
				}
				out.workerTime += time.Since(t)
				out.warnings += res.warnings
				out.shrinks += res.shrinks
				for _, t := range res.triggers {
					out.slots = append(out.slots, triggerSlotRow{t.rowID, t.unknown})
					for _, s := range t.sources {
						out.pairs = append(out.pairs, pairRow{source: s.rowID, trigger: t.rowID, slots: s.slots})
					}
				}
				mu.Unlock()
			}
		}()
	}

	newInstance := func(name string) instanceReplay {
		in := instanceReplay{pool: inc.Capacity.PoolAt(name, incident.RoleDecode, logStart)}
		for _, c := range timeline {
			if c.Instance == name && c.Role == incident.RoleDecode && c.ValidFrom.After(logStart) {
				in.growth = append(in.growth, poolGrowth{at: c.ValidFrom.UnixMicro(), pool: c.PoolTokens})
			}
		}
		return in
	}
	var (
		cur     string
		have    bool
		in      instanceReplay
		relSeqs []int64
	)
	flush := func() error {
		if !have {
			return nil
		}
		if len(in.rows) > math.MaxInt32 {
			return fmt.Errorf("analysis: %s has %d replayable rows, beyond the replay's %d", cur, len(in.rows), math.MaxInt32)
		}
		in.relOrder = make([]int32, len(in.rows))
		for i, s := range relSeqs {
			if s < 0 || s >= int64(len(in.rows)) {
				return fmt.Errorf("analysis: %s: rel_seq %d out of range on %s", q, s, cur)
			}
			in.relOrder[s] = int32(i)
		}
		out.instances++
		out.replayed += int64(len(in.rows))
		jobs <- job{cur, in}
		relSeqs = nil
		return nil
	}

	t0 := time.Now()
	err := casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
		rr, err := ar.QueryContext(ctx, queries.Get(q))
		if err != nil {
			return fmt.Errorf("analysis: %s: %w", q, err)
		}
		defer rr.Release()
		first := true
		for rr.Next() {
			if first {
				out.queryTime = time.Since(t0)
				first = false
			}
			rec := rr.RecordBatch()
			inst, err := stringCol(rec, 0, q)
			if err != nil {
				return err
			}
			var cols [6]*array.Int64
			for i := range cols {
				if cols[i], err = int64Col(rec, i+1, q); err != nil {
					return err
				}
			}
			tsC, endC, slotsC, owC, rowC, relC := cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]
			for i := 0; i < int(rec.NumRows()); i++ {
				name := inst.Value(i)
				if !have || name != cur {
					if err := flush(); err != nil {
						return err
					}
					cur, have = strings.Clone(name), true
					in = newInstance(cur)
				}
				in.rows = append(in.rows, replayRow{ts: tsC.Value(i), end: endC.Value(i),
					slots: slotsC.Value(i), overwrite: owC.Value(i), rowID: rowC.Value(i)})
				relSeqs = append(relSeqs, relC.Value(i))
			}
		}
		if err := rr.Err(); err != nil {
			return fmt.Errorf("analysis: %s: %w", q, err)
		}
		return flush()
	})
	out.readTime = time.Since(t0)
	close(jobs)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if out.err != nil {
		return nil, out.err
	}
	return out, nil
}

// loadGoResults registers the Go results as Arrow views and copies them
// into the temp tables analysis_pairs and analysis_trigger_slots.
func loadGoResults(ctx context.Context, conn *sql.Conn, pairs []pairRow, slots []triggerSlotRow) error {
	alloc := memory.NewGoAllocator()
	pairSchema := arrow.NewSchema([]arrow.Field{
		{Name: "source_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "trigger_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "slots", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	pb := array.NewRecordBuilder(alloc, pairSchema)
	defer pb.Release()
	src, trg := pb.Field(0).(*array.Int64Builder), pb.Field(1).(*array.Int64Builder)
	sl := pb.Field(2).(*array.Int64Builder)
	optional := func(b *array.Int64Builder, v int64) {
		if v > 0 {
			b.Append(v)
		} else {
			b.AppendNull()
		}
	}
	var pairRecs []arrow.RecordBatch
	for i, p := range pairs {
		src.Append(p.source)
		trg.Append(p.trigger)
		optional(sl, p.slots)
		if (i+1)%65536 == 0 {
			pairRecs = append(pairRecs, pb.NewRecordBatch())
		}
	}
	pairRecs = append(pairRecs, pb.NewRecordBatch())

	slotSchema := arrow.NewSchema([]arrow.Field{
		{Name: "trigger_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "unknown_slots", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	sb := array.NewRecordBuilder(alloc, slotSchema)
	defer sb.Release()
	for _, s := range slots {
		sb.Field(0).(*array.Int64Builder).Append(s.trigger)
		sb.Field(1).(*array.Int64Builder).Append(s.unknown)
	}
	slotRecs := []arrow.RecordBatch{sb.NewRecordBatch()}
	defer func() {
		for _, r := range append(pairRecs, slotRecs...) {
			r.Release()
		}
	}()

	return casedb.WithArrow(conn, func(ar *duckdb.Arrow, dc driver.Conn) error {
		for _, v := range []struct {
			view, query, drop string
			schema            *arrow.Schema
			recs              []arrow.RecordBatch
		}{
			{"arrow_analysis_pairs", "analysis_09_go_pairs", "analysis_09b_drop_pairs_view", pairSchema, pairRecs},
			{"arrow_analysis_trigger_slots", "analysis_10_trigger_slots", "analysis_10b_drop_slots_view", slotSchema, slotRecs},
		} {
			rr, err := array.NewRecordReader(v.schema, v.recs)
			if err != nil {
				return fmt.Errorf("analysis: %s: %w", v.view, err)
			}
			release, err := ar.RegisterView(rr, v.view)
			if err != nil {
				rr.Release()
				return fmt.Errorf("analysis: register %s: %w", v.view, err)
			}
			err = rawExec(ctx, dc, v.query)
			// The registration is a view in the case database that points at
			// this process's memory: drop it, or every other client that opens
			// the case (and queries it) reads freed memory.
			err = errors.Join(err, rawExec(ctx, dc, v.drop))
			release()
			rr.Release()
			if err != nil {
				return err
			}
		}
		return nil
	})
}
