// Package analysis finds the affected (trigger) requests of an incident and
// maps every possible exposure from a source request to a trigger, with a
// tier (confirmed, probable, possible) and its evidence, following
// DESIGN.md's contamination model. Everything is SQL (queries/analysis_*.sql)
// except the decode-pool replay, which runs in Go on rows read through
// Arrow, and the content match (package textmatch, shared with the sweep).
//
// Readings of DESIGN.md where it leaves a choice (each one tested):
//   - Served: status 2xx or no status. A source is always a served row.
//   - The replay starts at the log's first row (any row) with each decode
//     pool at the size in force then; later capacity rows that grow a pool
//     append never-written slots at their valid_from, before the releases
//     and allocations of that instant. A row that would shrink a pool is
//     ignored (slots cannot be taken back from their holders) and counted.
//   - A row with end_ts = ts is released right after its own allocation
//     (the "releases first" rule would free it before it holds anything).
//   - confirmed: a strong, specific content match (package textmatch); the
//     source precedes the trigger in replay order (ts, then request_id, then
//     row_id), any model, on the trigger's decode instance or an unknown one.
//   - residency: a placeable source on the trigger's decode instance whose
//     end_ts is in [trigger ts - residency_lookback, trigger ts]; a request
//     still running at the trigger's ts holds its slots and is no source.
//   - possible: source ts in [trigger ts - possible_lookback, trigger ts),
//     same model, when the source or the trigger cannot be placed.
//   - A trigger's own overwritten slots make it the owner of those slots,
//     so a later trigger can read it.
//   - Two trigger tests (DESIGN.md "Real logs"): over capacity, and the
//     prefill's cut (joined_requests.cut_at_prefill); either makes an
//     in-scope served call a trigger. A call over capacity disagrees with
//     the cut test only when it has a prefill record that could show the cut.
//   - The replay holds a joined call's slots when its decode record says so
//     (joined_requests.held_slots), else when the call was served.
package analysis

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/sheetcsv"
	"github.com/leakmap/leakmap/queries"
	"github.com/leakmap/leakmap/textmatch"
)

// Tier names, strongest first.
const (
	TierConfirmed = "confirmed"
	TierProbable  = "probable"
	TierPossible  = "possible"
)

// Summary is what one analysis run found.
type Summary struct {
	Triggers, RecipientTenants, SourceTenants int
	Exposures                                 map[string]int // by tier, cross-tenant and self together
	CrossTenant, SelfExposures                int
	// Unattributed requests (tenant_id '': engine records no gateway record
	// claims) are counted apart: triggers, and distinct source requests.
	UnattributedTriggers, UnattributedSources int
	// CutTriggers: triggers whose prefill record cut the prompt (the bug's
	// fingerprint); Disagreements: calls where that and the capacity test
	// disagree (trigger_disagreements.csv).
	CutTriggers, Disagreements       int
	ReplayedRequests, ReplayWarnings int64
	// PoolShrinks counts decode capacity rows that would shrink a pool;
	// the replay keeps the larger pool (slots cannot be taken back).
	PoolShrinks int64
	Elapsed     time.Duration
	ReplayTime  time.Duration
}

// Run analyses the case in db for the incident and (re)writes
// affected_requests, exposures, tenants and analysis_runs.
func Run(ctx context.Context, db *sql.DB, logger *slog.Logger, inc *incident.Incident) (*Summary, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	// The content match reads the case's fingerprints: bring them up to
	// date first (only rows not fingerprinted yet are hashed).
	if _, err := textmatch.Update(ctx, db, logger); err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	// Temporary tables live on one connection: every step uses this one.
	st, err := queries.OpenSteps(ctx, db, "analysis", logger, 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	conn := st.Conn
	exec := func(name string, args ...any) error { return st.Exec(ctx, name, args...) }

	k := inc.Contamination
	if err := exec("analysis_00_params_table"); err != nil {
		return nil, err
	}
	if err := exec("analysis_01_params", inc.Models, inc.WindowStart, inc.WindowEnd,
		inc.Capacity.PrefillPoolTokens, inc.Capacity.DecodePoolTokens, k.PageSize,
		k.ResidencyLookback.Microseconds(), k.PossibleLookback.Microseconds(),
		k.Model, k.Allocator, k.ResidencyLookback.String(), k.PossibleLookback.String(), inc.ID); err != nil {
		return nil, err
	}
	if err := exec("analysis_02_capacity"); err != nil {
		return nil, err
	}
	timeline := dedupTimeline(inc.Capacity.Timeline)
	for _, c := range timeline {
		if err := exec("analysis_03_capacity_row", c.Instance, c.Role, c.PoolTokens, c.ValidFrom); err != nil {
			return nil, err
		}
	}
	if err := exec("analysis_04_checks"); err != nil {
		return nil, err
	}
	if err := exec("analysis_04_triggers"); err != nil {
		return nil, err
	}

	sum := &Summary{Exposures: map[string]int{}}
	var pairs, slots *spill                         // nil: no replay
	defer func() { pairs.Close(); slots.Close() }() // temp files: nothing to report
	if k.Model == incident.ModelReplay {
		var logStart sql.NullInt64
		if err := conn.QueryRowContext(ctx, queries.Get("analysis_05_log_start")).Scan(&logStart); err != nil {
			return nil, fmt.Errorf("analysis: analysis_05_log_start: %w", err)
		}
		if logStart.Valid {
			dir, done, err := spillDir(ctx, conn)
			if err != nil {
				return nil, err
			}
			defer done()
			t0 := time.Now()
			rp, err := runReplay(ctx, conn, inc, timeline, logStart.Int64, dir)
			if err != nil {
				return nil, err
			}
			sum.ReplayTime = time.Since(t0)
			sum.ReplayedRequests, sum.ReplayWarnings, sum.PoolShrinks = rp.replayed, rp.warnings, rp.shrinks
			pairs, slots = rp.pairs, rp.slots
			logger.Info("replayed the decode pools", "allocator", k.Allocator, "requests", rp.replayed,
				"instances", rp.instances, "warnings", rp.warnings, "pairs", pairs.rows, "query", rp.queryTime.Round(time.Millisecond),
				"read", rp.readTime.Round(time.Millisecond), "replay_cpu", rp.workerTime.Round(time.Millisecond), "elapsed", sum.ReplayTime.Round(time.Millisecond))
			if rp.warnings > 0 {
				logger.Warn("replay: allocations larger than the free slots (took what there was)", "count", rp.warnings)
			}
			if rp.shrinks > 0 {
				logger.Warn("replay: decode capacity rows that shrink a pool were ignored", "count", rp.shrinks)
			}
		}
	}
	ms, err := confirmByText(ctx, conn, logger, exec, k.Evidence)
	if err != nil {
		return nil, err
	}
	logger.Debug("measured content matches", "candidates", ms.Candidates, "strong", ms.Strong)

	t := time.Now()
	if err := loadGoResults(ctx, conn, pairs, slots); err != nil {
		return nil, err
	}
	if d := time.Since(t); d > 100*time.Millisecond {
		logger.Debug("analysis step", "query", "analysis_09_go_pairs", "elapsed", d.Round(time.Millisecond))
	}

	// The outputs change together or not at all.
	if err := st.InTx(ctx, func() error {
		for _, name := range []string{"analysis_11_clear_affected", "analysis_12_affected",
			"analysis_12a_clear_checks", "analysis_12b_checks",
			"analysis_13_clear_exposures", "analysis_14_exposures",
			"analysis_15_clear_tenants", "analysis_16_tenants"} {
			if err := exec(name); err != nil {
				return err
			}
		}
		return exec("analysis_17_run", sum.ReplayedRequests, sum.ReplayWarnings)
	}); err != nil {
		return nil, err
	}

	var confirmed, probable, possible int
	if err := conn.QueryRowContext(ctx, queries.Get("analysis_18_summary")).Scan(&sum.Triggers,
		&sum.RecipientTenants, &sum.SourceTenants, &confirmed, &probable, &possible,
		&sum.CrossTenant, &sum.SelfExposures, &sum.UnattributedTriggers, &sum.UnattributedSources,
		&sum.CutTriggers, &sum.Disagreements); err != nil {
		return nil, fmt.Errorf("analysis: analysis_18_summary: %w", err)
	}
	sum.Exposures[TierConfirmed], sum.Exposures[TierProbable], sum.Exposures[TierPossible] = confirmed, probable, possible
	sum.Elapsed = time.Since(start)
	logger.Info("analysis done", "triggers", sum.Triggers, "exposures", confirmed+probable+possible,
		"cross_tenant", sum.CrossTenant, "elapsed", sum.Elapsed.Round(time.Millisecond))
	return sum, nil
}

// confirmByText measures the content match of every trigger's logged
// response with the served prompts before it (textmatch's steps, with the
// analysis's candidates) into text_matches.
func confirmByText(ctx context.Context, conn *sql.Conn, logger *slog.Logger, exec func(string, ...any) error, th incident.Evidence) (*textmatch.MeasureStats, error) {
	if err := exec("analysis_07_text_responses"); err != nil {
		return nil, err
	}
	if err := textmatch.Prepare(ctx, conn, logger, th); err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	if err := exec("analysis_08_text_candidates"); err != nil {
		return nil, err
	}
	ms, err := textmatch.MeasureCandidates(ctx, conn, logger, th)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	return ms, nil
}

// dedupTimeline keeps, for rows of the same instance, role and valid_from,
// the last one (as incident.Capacity.PoolAt does), in time order.
func dedupTimeline(tl []incident.CapacityChange) []incident.CapacityChange {
	type key struct {
		inst, role string
		at         time.Time
	}
	last := map[key]int{}
	for i, c := range tl {
		last[key{c.Instance, c.Role, c.ValidFrom}] = i
	}
	var out []incident.CapacityChange
	for i, c := range tl {
		if last[key{c.Instance, c.Role, c.ValidFrom}] == i {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ValidFrom.Before(out[j].ValidFrom) })
	return out
}

// rawExec runs one statement on a driver connection (inside conn.Raw, where
// the *sql.Conn itself must not be used).
func rawExec(ctx context.Context, dc any, name string) error {
	ex, ok := dc.(driver.ExecerContext)
	if !ok {
		return errors.New("analysis: driver connection cannot exec")
	}
	if _, err := ex.ExecContext(ctx, queries.Get(name), nil); err != nil {
		return fmt.Errorf("analysis: %s: %w", name, err)
	}
	return nil
}

// outputs names each CSV file and the query that writes it.
var outputs = []sheetcsv.File{
	{Name: "affected_requests.csv", Query: queries.Get("out_affected_requests")},
	{Name: "exposures.csv", Query: queries.Get("out_exposures"), Table: "exposures"}, // in its stored order: read straight from it
	{Name: "tenants.csv", Query: queries.Get("out_tenants")},
	{Name: "trigger_disagreements.csv", Query: queries.Get("out_trigger_disagreements")},
}

// OutputFiles lists the files WriteCSV writes, in order.
func OutputFiles() []string {
	var out []string
	for _, o := range outputs {
		out = append(out, o.Name)
	}
	return out
}
