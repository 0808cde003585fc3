// Package filing gathers the facts of the regulator filing (GDPR Art. 33)
// from the case database: filing type, figures, tenant notice counts, the
// 72-hour deadline and whether it is met. The regulator notice (notify) and
// the Regulator sheet (report) both state these facts, from these queries,
// so they cannot disagree.
package filing

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
)

// Filing types: "initial" while the breach is not contained or not
// analysed (Art. 33(4): information in phases), else "complete".
const (
	Initial  = "initial"
	Complete = "complete"
)

// DeadlineHours is the Art. 33(1) notification delay from awareness.
const DeadlineHours = 72

// Notices counts the tenant notices; the regulator notice is counted apart.
// Drafted = Ready + Blocked + CannotNotify.
type Notices struct {
	Drafted, Ready, Blocked, CannotNotify, Sent int64
}

// Facts are what the regulator is told.
type Facts struct {
	Filing string

	RecipientTenants, SourceTenants, TenantsTotal int64
	AffectedRequests, ExposedRequests             int64
	Confirmed, Probable, Possible, SelfExposures  int64
	FirstAffected, LastAffected                   *time.Time
	AnalysisRuns                                  int64

	Notices Notices

	// Deadline is aware_at + 72 h (nil without aware_at). SentAt is when a
	// mail server accepted the regulator notice, if the ledger has it. Late
	// judges SentAt, else AsOf, against the deadline; LateBy is by how much.
	Deadline *time.Time
	SentAt   *time.Time
	AsOf     time.Time
	Late     bool
	LateBy   time.Duration
}

// Load reads the facts from the case database at asOf.
func Load(ctx context.Context, db *sql.DB, inc *incident.Incident, asOf time.Time) (*Facts, error) {
	f := &Facts{AsOf: asOf.UTC()}
	var first, last, sent sql.NullTime
	err := db.QueryRowContext(ctx, queries.Get("filing_figures")).Scan(
		&f.RecipientTenants, &f.SourceTenants, &f.TenantsTotal, &f.AffectedRequests, &f.ExposedRequests,
		&f.Confirmed, &f.Probable, &f.Possible, &f.SelfExposures, &first, &last, &f.AnalysisRuns, &sent)
	if err != nil {
		return nil, fmt.Errorf("filing figures: %w", err)
	}
	f.FirstAffected, f.LastAffected, f.SentAt = utc(first), utc(last), utc(sent)
	n := &f.Notices
	if err := db.QueryRowContext(ctx, queries.Get("filing_notices")).Scan(&n.Drafted, &n.Ready, &n.Blocked, &n.CannotNotify, &n.Sent); err != nil {
		return nil, fmt.Errorf("filing notices: %w", err)
	}
	f.Filing = Initial
	if inc.ContainedAt != nil && !inc.ContainedAt.After(f.AsOf) && f.AnalysisRuns > 0 {
		f.Filing = Complete
	}
	if inc.AwareAt != nil {
		d := inc.AwareAt.Add(DeadlineHours * time.Hour).UTC()
		f.Deadline = &d
	}
	f.Judge()
	return f, nil
}

// Judge sets Late and LateBy from Deadline, SentAt and AsOf: the regulator
// notice's acceptance when the ledger has it, else filing at AsOf.
func (f *Facts) Judge() {
	f.Late, f.LateBy = false, 0
	if f.Deadline == nil {
		return
	}
	at := f.AsOf
	if f.SentAt != nil {
		at = *f.SentAt
	}
	if at.After(*f.Deadline) {
		f.Late, f.LateBy = true, at.Sub(*f.Deadline)
	}
}

func utc(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}
