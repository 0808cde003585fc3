package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/filing"
	"github.com/leakmap/leakmap/queries"
)

// Summary is the one row of queries/report_summary.sql.
type Summary struct {
	Requests            int64
	Files               int64
	RowsRead            int64
	RowsLoaded          int64
	RowsRejected        int64
	RowsDuplicate       int64
	Bytes               int64
	AffectedRequests    int64
	AffectedNoDecode    int64
	UnknownSlots        int64
	FirstTrigger        *time.Time
	LastTrigger         *time.Time
	Exposures           int64
	CrossExposures      int64
	SelfExposures       int64
	SourceRequests      int64
	TenantsListed       int64
	RecipientTenants    int64
	SourceTenants       int64
	BothTenants         int64
	NoticesDrafted      int64
	TenantNotices       int64
	RegulatorNotices    int64
	NoticesReady        int64
	NoticesBlocked      int64
	NoticesCannotNotify int64
	NoticesSent         int64
	NoticesFailed       int64
	RegulatorSentAt     *time.Time
	AnalysisRuns        int64
	// The real-layout join (zero on a canonical case).
	JoinedRequests, UnattributedRequests, UnattributedAffected, UnattributedSources int64
	AffectedCut, TriggerDisagreements                                               int64
}

// TierRow is one row of queries/report_tiers.sql.
type TierRow struct {
	Tier             string
	Exposures        int64
	CrossExposures   int64
	SelfExposures    int64
	SourceRequests   int64
	SourceTenants    int64
	RecipientTenants int64
}

// DayRow is one row of queries/report_daily.sql.
type DayRow struct {
	Day              time.Time
	AffectedRequests int64
	RecipientTenants int64
	CrossExposures   int64
	// SweepLeaking: the sweep's responses with a strong match with another
	// tenant's earlier prompt that day (any model); SweepRan is false when
	// the case was never swept.
	SweepLeaking int64
	SweepRan     bool
}

// Event is one row of queries/report_timeline.sql.
type Event struct {
	Event  string
	TS     time.Time
	Source string
}

// MapRow is one cell of queries/report_tenant_map.sql.
type MapRow struct {
	Recipient    string
	Source       string
	Tier         string
	TierRank     int
	Exposures    int64
	SelfExposure bool
}

// TenantMap is queries/report_tenant_map.sql: the tenants drawn on the
// map, in id order, the cells between them, and how many tenants each
// role has.
type TenantMap struct {
	Recipients, Sources       []string
	Cells                     []MapRow
	AllRecipients, AllSources int
}

// Point is one row of queries/report_prompt_series.sql.
type Point struct {
	TS           time.Time
	PromptTokens int64
	Trigger      bool
}

// Series is the prompt-length series drawn on the page.
type Series struct {
	Points   []Point
	Total    int64 // in-scope requests in the case
	Sampled  bool  // Points holds fewer rows than Total
	Triggers int64
}

// caseData is everything small that the workbook and the page share; the
// big evidence tables are streamed from their queries instead.
type caseData struct {
	inc      *incident.Incident
	asOf     time.Time
	summary  Summary
	tiers    []TierRow
	days     []DayRow
	timeline []Event
	tmap     TenantMap
	series   Series
	reg      []RegField
	facts    *filing.Facts // the regulator filing, shared with the regulator notice
	// scopeInstances are the prefill instances that served the models in scope.
	scopeInstances map[string]bool
}

// Sampling limits of the prompt-length chart: above maxPoints in-scope
// requests, keep every trigger, a 1-in-N hash sample of about maxPoints
// others (where most requests lie), and the extremes of each of
// seriesSlices time slices (the envelope).
var (
	maxPoints    = 4000
	seriesSlices = 1000
)

func loadCase(ctx context.Context, db *sql.DB, inc *incident.Incident, asOf time.Time) (*caseData, error) {
	d := &caseData{inc: inc, asOf: asOf}
	// The figures' queries are independent and each of them keeps DuckDB's
	// threads only partly busy (10M requests: 6.5 s of CPU in 4.7 s one
	// after the other), so they run two at a time, the longest first; each
	// writes its own fields of d.
	figures := []func() error{
		func() error { return loadSeries(ctx, db, d) },
		func() error {
			var err error
			d.facts, err = filing.Load(ctx, db, inc, asOf)
			return err
		},
		func() error { return loadTiers(ctx, db, d) },
		func() error {
			var err error
			d.tmap, err = loadTenantMap(ctx, db, mapMaxRecipients, mapMaxSources)
			return err
		},
		func() error { return loadSummary(ctx, db, d) },
		func() error { return loadScopeInstances(ctx, db, d) },
		func() error { return loadDays(ctx, db, d) },
		func() error { return loadTimeline(ctx, db, d) },
	}
	if err := runLimited(ctx, 2, figures); err != nil {
		return nil, err
	}
	var err error
	if d.reg, err = regulatorFields(d); err != nil {
		return nil, err
	}
	return d, nil
}

// runLimited runs the functions, at most n at a time, in order of start,
// and returns their errors joined; after a failure the ones not started
// are not run.
func runLimited(ctx context.Context, n int, fns []func() error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(fns))
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := range next {
				if errs[i] = fns[i](); errs[i] != nil {
					cancel()
				}
			}
		})
	}
feed:
	for i := range fns {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

func loadSummary(ctx context.Context, db *sql.DB, d *caseData) error {
	s := &d.summary
	var first, last, regSent sql.NullTime
	err := db.QueryRowContext(ctx, query("report_summary")).Scan(
		&s.Requests, &s.Files, &s.RowsRead, &s.RowsLoaded, &s.RowsRejected, &s.RowsDuplicate, &s.Bytes,
		&s.AffectedRequests, &s.AffectedNoDecode, &s.UnknownSlots, &first, &last,
		&s.Exposures, &s.CrossExposures, &s.SelfExposures, &s.SourceRequests,
		&s.TenantsListed, &s.RecipientTenants, &s.SourceTenants, &s.BothTenants,
		&s.NoticesDrafted, &s.TenantNotices, &s.RegulatorNotices, &s.NoticesReady, &s.NoticesBlocked, &s.NoticesCannotNotify,
		&s.NoticesSent, &s.NoticesFailed, &regSent, &s.AnalysisRuns,
		&s.JoinedRequests, &s.UnattributedRequests, &s.UnattributedAffected, &s.UnattributedSources,
		&s.AffectedCut, &s.TriggerDisagreements)
	if err != nil {
		return fmt.Errorf("report summary: %w", err)
	}
	s.FirstTrigger, s.LastTrigger, s.RegulatorSentAt = nullTime(first), nullTime(last), nullTime(regSent)
	return nil
}

func loadTiers(ctx context.Context, db *sql.DB, d *caseData) error {
	return scanAll(ctx, db, "report_tiers", nil, func(r *sql.Rows) error {
		var t TierRow
		err := r.Scan(&t.Tier, &t.Exposures, &t.CrossExposures, &t.SelfExposures, &t.SourceRequests, &t.SourceTenants, &t.RecipientTenants)
		d.tiers = append(d.tiers, t)
		return err
	})
}

func loadDays(ctx context.Context, db *sql.DB, d *caseData) error {
	inc := d.inc
	return scanAll(ctx, db, "report_daily", []any{inc.WindowStart, inc.WindowEnd}, func(r *sql.Rows) error {
		var x DayRow
		var sw sql.NullInt64
		err := r.Scan(&x.Day, &x.AffectedRequests, &x.RecipientTenants, &x.CrossExposures, &sw)
		x.Day = x.Day.UTC()
		x.SweepLeaking, x.SweepRan = sw.Int64, sw.Valid
		d.days = append(d.days, x)
		return err
	})
}

func loadTimeline(ctx context.Context, db *sql.DB, d *caseData) error {
	inc := d.inc
	tlArgs := []any{timeArg(inc.LaunchedAt), inc.WindowStart, inc.WindowEnd, timeArg(inc.DiscoveredAt),
		timeArg(inc.AwareAt), timeArg(inc.ContainedAt), d.asOf}
	return scanAll(ctx, db, "report_timeline", tlArgs, func(r *sql.Rows) error {
		// The query gives keys; the report's words are the catalogue's.
		var e Event
		if err := r.Scan(&e.Event, &e.TS, &e.Source); err != nil {
			return err
		}
		e.TS = e.TS.UTC()
		var err error
		if e.Event, err = reportCatalog().T("report.timeline.event." + e.Event); err != nil {
			return err
		}
		if e.Source, err = reportCatalog().T("report.timeline.source." + e.Source); err != nil {
			return err
		}
		d.timeline = append(d.timeline, e)
		return nil
	})
}

func loadSeries(ctx context.Context, db *sql.DB, d *caseData) error {
	if err := scanAll(ctx, db, "report_prompt_series", []any{d.inc.Models, maxPoints, seriesSlices}, func(r *sql.Rows) error {
		var p Point
		err := r.Scan(&p.TS, &p.PromptTokens, &p.Trigger, &d.series.Total)
		p.TS = p.TS.UTC()
		if p.Trigger {
			d.series.Triggers++
		}
		d.series.Points = append(d.series.Points, p)
		return err
	}); err != nil {
		return err
	}
	d.series.Sampled = int64(len(d.series.Points)) < d.series.Total
	return nil
}

func loadScopeInstances(ctx context.Context, db *sql.DB, d *caseData) error {
	d.scopeInstances = map[string]bool{}
	return scanAll(ctx, db, "report_scope_instances", []any{d.inc.Models}, func(r *sql.Rows) error {
		var name string
		err := r.Scan(&name)
		d.scopeInstances[name] = true
		return err
	})
}

// loadTenantMap reads the map of the maxR recipient and maxS source
// tenants with the most exposures.
func loadTenantMap(ctx context.Context, db *sql.DB, maxR, maxS int) (TenantMap, error) {
	var tm TenantMap
	err := scanAll(ctx, db, "report_tenant_map", []any{maxR, maxS}, func(r *sql.Rows) error {
		var kind string
		var recip, src, tier sql.NullString
		var rank, n sql.NullInt64
		var self sql.NullBool
		if err := r.Scan(&kind, &recip, &src, &tier, &rank, &n, &self, &tm.AllRecipients, &tm.AllSources); err != nil {
			return err
		}
		switch kind {
		case "recipient":
			tm.Recipients = append(tm.Recipients, recip.String)
		case "source":
			tm.Sources = append(tm.Sources, src.String)
		default:
			tm.Cells = append(tm.Cells, MapRow{Recipient: recip.String, Source: src.String, Tier: tier.String,
				TierRank: int(rank.Int64), Exposures: n.Int64, SelfExposure: self.Bool})
		}
		return nil
	})
	return tm, err
}

// query returns a query's SQL without its trailing semicolon, so it can be
// wrapped in COPY or a subquery.
func query(name string) string {
	return strings.TrimSuffix(strings.TrimSpace(queries.Get(name)), ";")
}

func scanAll(ctx context.Context, db *sql.DB, name string, args []any, each func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query(name), args...)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// timeArg passes an optional time as a typed NULL or a value.
func timeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}
