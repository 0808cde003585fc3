// Package sweep looks for leaks nobody has explained yet (DESIGN.md
// "Sweep"): every logged response of the case is compared with the earlier
// prompts of the other tenants of the same model, on any instance, with the
// content-match rules of the confirmed tier (package textmatch). It needs no
// incident, window or threshold; its matches (sweep_matches) and per-day
// counts (sweep_days) go into the case database and sweep.csv,
// sweep_days.csv.
//
// It scales as the case grows: texts are kept as winnowed fingerprints in
// the case database (only new rows are hashed on a later run), the
// candidates are a join on fingerprints that can carry weight (no pair of
// texts is compared unless they share one), and how many tenants hold a
// fingerprint is counted for the responses' fingerprints only.
package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
	"github.com/leakmap/leakmap/textmatch"
)

// Options selects what the sweep compares.
type Options struct {
	Models       []string   // empty: every model
	Since, Until *time.Time // response ts in [Since, Until); nil: open
	Evidence     incident.Evidence
}

// ModelWindow is the window the sweep suggests for one model: its first
// and last response with a strong match.
type ModelWindow struct {
	Model            string
	First, Last      time.Time
	LeakingResponses int64
	Pairs            int64
}

// Summary is what one sweep found.
type Summary struct {
	Index      *textmatch.IndexStats
	Responses  int64 // responses with logged text compared
	Prompts    int64 // served prompts with logged text of those models (what they are compared with)
	Candidates int64 // pairs measured
	Matches    int64 // strong matches (rows of sweep.csv)
	// WeakRare, WeakRun: the highest figures among the measured pairs that
	// are not strong (chance matches, shared templates).
	WeakRare, WeakRun int
	Windows           []ModelWindow
	Elapsed           time.Duration
}

// Run sweeps the case in db and rewrites sweep_matches and sweep_days.
func Run(ctx context.Context, db *sql.DB, logger *slog.Logger, opt Options) (*Summary, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t0 := time.Now()
	if opt.Evidence == (incident.Evidence{}) {
		opt.Evidence = incident.DefaultEvidence
	}
	sum := &Summary{}
	var err error
	if sum.Index, err = textmatch.Update(ctx, db, logger); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	st, err := queries.OpenSteps(ctx, db, "sweep", logger, 0)
	if err != nil {
		return nil, err
	}
	defer st.Close() // its temp tables die with the connection
	conn := st.Conn
	exec := func(name string, args ...any) error { return st.Exec(ctx, name, args...) }
	// DuckDB holds more than its memory_limit in some of the big joins
	// below (at 10M requests the limit was 3 GiB and the process 3.9 GiB
	// with Go's share ~100 MiB): unordered temp tables and a purging
	// allocator (casedb) keep it closer (docs/performance.md, the sweep).
	if err := exec("sweep_00a_unordered"); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.Background(), queries.Get("sweep_10_reset_order"))
	models := opt.Models
	if models == nil {
		models = []string{}
	}
	if err := exec("sweep_00_responses_table"); err != nil {
		return nil, err
	}
	if err := exec("sweep_01_responses", models, opt.Since, opt.Until); err != nil {
		return nil, err
	}
	if err := conn.QueryRowContext(ctx, queries.Get("sweep_02_count")).Scan(&sum.Responses); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if err := conn.QueryRowContext(ctx, queries.Get("sweep_02b_prompts"), models).Scan(&sum.Prompts); err != nil {
		return nil, fmt.Errorf("sweep: sweep_02b_prompts: %w", err)
	}
	if err := textmatch.Prepare(ctx, conn, logger, opt.Evidence); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if err := exec("sweep_03_candidates"); err != nil {
		return nil, err
	}
	ms, err := textmatch.MeasureCandidates(ctx, conn, logger, opt.Evidence)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	sum.Candidates, sum.Matches = ms.Candidates, ms.Strong
	if err := conn.QueryRowContext(ctx, queries.Get("sweep_09_weak")).Scan(&sum.WeakRare, &sum.WeakRun); err != nil {
		return nil, fmt.Errorf("sweep: sweep_09_weak: %w", err)
	}

	if err := st.InTx(ctx, func() error {
		for _, q := range []string{"sweep_04_clear", "sweep_05_matches", "sweep_06_clear_days", "sweep_07_days"} {
			if err := exec(q); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}

	rows, err := conn.QueryContext(ctx, queries.Get("sweep_08_window"))
	if err != nil {
		return nil, fmt.Errorf("sweep: sweep_08_window: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var w ModelWindow
		if err := rows.Scan(&w.Model, &w.First, &w.Last, &w.LeakingResponses, &w.Pairs); err != nil {
			return nil, fmt.Errorf("sweep: sweep_08_window: %w", err)
		}
		w.First, w.Last = w.First.UTC(), w.Last.UTC()
		sum.Windows = append(sum.Windows, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sweep: sweep_08_window: %w", err)
	}
	sum.Elapsed = time.Since(t0)
	logger.Info("sweep done", "responses", sum.Responses, "prompts", sum.Prompts, "candidates", sum.Candidates,
		"matches", sum.Matches, "elapsed", sum.Elapsed.Round(time.Millisecond))
	return sum, nil
}
