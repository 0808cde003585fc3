package analysis

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
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
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
)

type replayOutput struct {
	pairs, slots                *spill // (source, trigger, stale slots) and (trigger, unknown slots)
	replayed, warnings, shrinks int64
	instances                   int
	queryTime, readTime         time.Duration // the instances' tables built (summed), the last allocation read (since the replay started)
	workerTime                  time.Duration // the replay itself, summed over instances
}

// eventChunk is about how many allocations the reader hands a replay
// worker at once: a chunk ends between two times (a variable for tests).
var eventChunk = 4096

// readChunk is how many allocations one query reads back from the events
// table: what the driver holds at once (~60 MB).
const readChunk = 1 << 20

// allocChunk is a piece of one instance's allocations; their request_ids
// are slices of one string (one copy per chunk, not one per row).
type allocChunk []replayAlloc

// runReplay replays every decode instance in turn: its allocations go into
// a temp table sorted by time (a temp table spills past
// memory_limit; a query's whole result would be held by the driver), come
// back through Arrow readChunk at a time, and stream into the instance's
// replayer, which merges the releases in itself (releaseMerge). Instances
// run on up to one worker per CPU: one is replayed while the next is
// sorted and read. Nothing grows with the rows: the table holds one
// instance, each replayer its pool's live slots and rows in flight, the
// reader a few chunks, and the pairs found go to spill files as they come.
func runReplay(ctx context.Context, conn *sql.Conn, inc *incident.Incident, timeline []incident.CapacityChange, logStartUS int64, spillDir string) (_ *replayOutput, err error) {
	const (
		q      = "analysis_06_replay_events"
		qChunk = "analysis_06b_replay_chunk"
		qDrop  = "analysis_06c_drop_replay_events"
		qTable = "analysis_05c_replay_events_table"
		qInsts = "analysis_05d_replay_instances"
	)
	if err := queries.InsertionOrdered(ctx, conn); err != nil {
		return nil, fmt.Errorf("analysis: replay: %w", err)
	}
	out := &replayOutput{}
	if out.pairs, err = newSpill(spillDir, "pairs", 3); err != nil {
		return nil, err
	}
	if out.slots, err = newSpill(spillDir, "trigger-slots", 2); err != nil {
		out.pairs.Close()
		return nil, err
	}
	defer func() {
		if err != nil {
			out.pairs.Close()
			out.slots.Close()
		}
	}()
	policy := inc.Contamination.Allocator
	logStart := usToTime(logStartUS)

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		werr    error
		workers = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	// replay runs one instance's allocations as the reader sends them; on
	// a failure it keeps draining so that the reader never blocks.
	replay := func(name string, allocs <-chan allocChunk) {
		defer wg.Done()
		defer func() { <-workers }()
		var pairs, slots []int64
		flush := func() error {
			mu.Lock()
			defer mu.Unlock()
			err := errors.Join(out.pairs.write(pairs), out.slots.write(slots))
			pairs, slots = pairs[:0], slots[:0]
			return err
		}
		emit := func(t triggerSlots) {
			slots = append(slots, t.rowID, t.unknown)
			for _, s := range t.sources {
				pairs = append(pairs, s.rowID, t.rowID, s.slots)
			}
		}
		var cpu time.Duration
		fail := func(err error) {
			mu.Lock()
			if werr == nil {
				werr = fmt.Errorf("analysis: replay of %s: %w", name, err)
			}
			mu.Unlock()
			for range allocs {
			}
		}
		pool := inc.Capacity.PoolAt(name, incident.RoleDecode, logStart)
		var growth []poolGrowth
		for _, c := range timeline {
			if c.Instance == name && c.Role == incident.RoleDecode && c.ValidFrom.After(logStart) {
				growth = append(growth, poolGrowth{at: c.ValidFrom.UnixMicro(), pool: c.PoolTokens})
			}
		}
		r, err := newReplayer(policy, pool, growth, emit)
		if err != nil {
			fail(err)
			return
		}
		var m releaseMerge
		for chunk := range allocs {
			t := time.Now()
			for _, a := range chunk {
				if err := m.alloc(r.event, a); err != nil {
					fail(err)
					return
				}
			}
			if len(pairs)+len(slots) >= 3*eventChunk {
				if err := flush(); err != nil {
					fail(err)
					return
				}
			}
			cpu += time.Since(t)
		}
		t := time.Now()
		if err := m.finish(r.event); err != nil {
			fail(err)
			return
		}
		if err := flush(); err != nil {
			fail(err)
			return
		}
		cpu += time.Since(t)
		mu.Lock()
		out.workerTime += cpu
		out.replayed += r.rows
		out.warnings += r.warnings
		out.shrinks += r.shrinks
		mu.Unlock()
	}

	var (
		allocs chan allocChunk
		chunk  allocChunk
		ids    []byte // the chunk's request_ids, end to end
		idEnd  []int  // where each row's request_id ends in ids
		lastT  int64  // the last allocation's time, to check the table's order
	)
	send := func() {
		if len(chunk) == 0 {
			return
		}
		all, start := string(ids), 0
		for i, e := range idEnd {
			chunk[i].requestID = all[start:e]
			start = e
		}
		sortTies(chunk)
		allocs <- chunk
		chunk, ids, idEnd = make(allocChunk, 0, eventChunk), ids[:0], idEnd[:0]
	}
	// read hands one batch's allocations to the current instance's worker.
	read := func(name string, rec arrow.RecordBatch) error {
		var cols [5]*array.Int64
		var err error
		for i := range cols {
			if cols[i], err = casedb.Column[*array.Int64](rec, i, "analysis: "+qChunk); err != nil {
				return err
			}
		}
		rid, err := casedb.Column[casedb.StringColumn](rec, 5, "analysis: "+qChunk)
		if err != nil {
			return err
		}
		tC, endC, slotsC, owC, rowC := cols[0], cols[1], cols[2], cols[3], cols[4]
		for i := 0; i < int(rec.NumRows()); i++ {
			t, end := tC.Value(i), endC.Value(i)
			if t < lastT {
				return fmt.Errorf("analysis: %s: on %s, an allocation at %d read after one at %d: the rows are out of order", qChunk, name, t, lastT)
			}
			if end < t {
				return fmt.Errorf("analysis: %s: on %s, row %d ends at %d before it starts at %d", qChunk, name, rowC.Value(i), end, t)
			}
			if len(chunk) >= eventChunk && t > lastT {
				send() // between two times: send sorts each time's rows whole
			}
			lastT = t
			chunk = append(chunk, replayAlloc{ts: t, end: end, slots: slotsC.Value(i),
				overwrite: owC.Value(i), rowID: rowC.Value(i)})
			ids = append(ids, rid.Value(i)...)
			idEnd = append(idEnd, len(ids))
		}
		return nil
	}
	t0 := time.Now()
	defer func() {
		if _, derr := conn.ExecContext(context.WithoutCancel(ctx), queries.Get(qDrop)); derr != nil && err == nil {
			err = fmt.Errorf("analysis: %s: %w", qDrop, derr)
		}
	}()
	names, err := instanceNames(ctx, conn, qInsts)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		// A new table for each instance: its rowids start at 0.
		tq := time.Now()
		if _, err = conn.ExecContext(ctx, queries.Get(qTable)); err != nil {
			err = fmt.Errorf("analysis: %s: %w", qTable, err)
			break
		}
		if _, err = conn.ExecContext(ctx, queries.Get(q), name); err != nil {
			err = fmt.Errorf("analysis: %s (%s): %w", q, name, err)
			break
		}
		out.queryTime += time.Since(tq)
		out.instances++
		workers <- struct{}{}
		allocs, chunk, lastT = make(chan allocChunk, 16), make(allocChunk, 0, eventChunk), math.MinInt64
		wg.Add(1)
		go replay(name, allocs)
		err = casedb.WithArrow(conn, func(ar *duckdb.Arrow, _ driver.Conn) error {
			return queries.Pieces(readChunk, func(lo, hi int64) (int64, error) {
				rr, err := ar.QueryContext(ctx, queries.Get(qChunk), lo, hi)
				if err != nil {
					return 0, fmt.Errorf("analysis: %s: %w", qChunk, err)
				}
				defer rr.Release()
				var n int64
				for rr.Next() {
					rec := rr.RecordBatch()
					n += rec.NumRows()
					if err := read(name, rec); err != nil {
						return n, err
					}
				}
				if err := rr.Err(); err != nil {
					return n, fmt.Errorf("analysis: %s: %w", qChunk, err)
				}
				return n, nil
			})
		})
		if err == nil {
			send()
		}
		close(allocs)
		if err != nil {
			break
		}
	}
	out.readTime = time.Since(t0)
	wg.Wait()
	if err = errors.Join(err, werr); err != nil {
		return nil, err
	}
	return out, nil
}

// sortTies puts the allocations of each time in c in (request_id byte
// order, row_id) order: the table gives them by (ts, row_id), and a chunk
// holds every row of the times it holds (runReplay cuts between times).
func sortTies(c allocChunk) {
	for i := 0; i < len(c); {
		j := i + 1
		for j < len(c) && c[j].ts == c[i].ts {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(c[i:j], func(a, b replayAlloc) int {
				return cmp.Or(strings.Compare(a.requestID, b.requestID), cmp.Compare(a.rowID, b.rowID))
			})
		}
		i = j
	}
}

// instanceNames runs query (one text column) and returns its rows.
func instanceNames(ctx context.Context, conn *sql.Conn, query string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, queries.Get(query))
	if err != nil {
		return nil, fmt.Errorf("analysis: %s: %w", query, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("analysis: %s: %w", query, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analysis: %s: %w", query, err)
	}
	return names, nil
}

// loadGoResults copies the replay's spilled results into the temp tables
// analysis_pairs and analysis_trigger_slots, through Arrow views that read
// the spill files batch by batch.
func loadGoResults(ctx context.Context, conn *sql.Conn, pairs, slots *spill) error {
	pairSchema := arrow.NewSchema([]arrow.Field{
		{Name: "source_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "trigger_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "slots", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, // NULL when 0
	}, nil)
	slotSchema := arrow.NewSchema([]arrow.Field{
		{Name: "trigger_row_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "unknown_slots", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	return casedb.WithArrow(conn, func(ar *duckdb.Arrow, dc driver.Conn) error {
		for _, v := range []struct {
			view, query, drop string
			schema            *arrow.Schema
			data              *spill
		}{
			{"arrow_analysis_pairs", "analysis_09_go_pairs", "analysis_09b_drop_pairs_view", pairSchema, pairs},
			{"arrow_analysis_trigger_slots", "analysis_10_trigger_slots", "analysis_10b_drop_slots_view", slotSchema, slots},
		} {
			rr, err := v.data.reader(v.schema)
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
			err = errors.Join(err, rawExec(ctx, dc, v.drop), rr.Err())
			release()
			rr.Release()
			if err != nil {
				return err
			}
		}
		return nil
	})
}
