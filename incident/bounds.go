package incident

import (
	"fmt"
	"time"
)

// Bounds of the incident file's values, checked at load so that a typo
// stops the run with the key named (exit 2) instead of failing in analysis
// or drafting notices dated year 1.
const (
	// MaxPoolTokens is the replay's bound on a pool (its slots are 32-bit):
	// 4 billion tokens of KV cache, far beyond any machine.
	MaxPoolTokens = 1<<32 - 1
	// MaxPageSize: KV pages hold 1 to a few hundred tokens.
	MaxPageSize = 1 << 20
	// MaxLookback: KV memory does not survive a month on a serving machine.
	MaxLookback = 31 * 24 * time.Hour
	// MaxTolerance: records of one call are seconds apart, not hours.
	MaxTolerance = time.Hour
)

// Every time of the incident file lies in [MinYear, MaxYear): a date outside
// is a typo (0001-01-01, 20266-09-01), not an incident.
const (
	MinYear = 2000
	MaxYear = 2100
)

// checkRanges adds a problem for every value outside its bound.
func checkRanges(inc *Incident, bad func(format string, a ...any)) {
	c := inc.Capacity
	for _, p := range []struct {
		field string
		n     int64
	}{
		{"capacity.prefill_pool_tokens", c.PrefillPoolTokens},
		{"capacity.decode_pool_tokens", c.DecodePoolTokens},
		{"capacity.max_context_tokens", c.MaxContextTokens},
	} {
		if p.n > MaxPoolTokens {
			bad("%s: %d tokens is beyond any machine (at most %d)", p.field, p.n, int64(MaxPoolTokens))
		}
	}
	if ps := inc.Contamination.PageSize; ps > MaxPageSize || (c.DecodePoolTokens > 0 && ps > c.DecodePoolTokens) {
		bad("contamination.page_size: %d tokens per page is more than %d or the decode pool", ps, MaxPageSize)
	}
	for _, d := range []struct {
		field string
		d     time.Duration
	}{
		{"contamination.residency_lookback", inc.Contamination.ResidencyLookback},
		{"contamination.possible_lookback", inc.Contamination.PossibleLookback},
	} {
		if d.d > MaxLookback {
			bad("%s: %s is longer than %s", d.field, d.d, MaxLookback)
		}
	}
	for _, d := range []struct {
		field string
		d     time.Duration
	}{
		{"join.room_tolerance", inc.Join.RoomTolerance},
		{"join.gateway_tolerance", inc.Join.GatewayTolerance},
	} {
		if d.d > MaxTolerance {
			bad("%s: %s is longer than %s", d.field, d.d, MaxTolerance)
		}
	}
	for _, t := range []struct {
		field string
		t     *time.Time
	}{
		{"window.start", &inc.WindowStart}, {"window.end", &inc.WindowEnd},
		{"launched_at", inc.LaunchedAt}, {"discovered_at", inc.DiscoveredAt}, {"aware_at", inc.AwareAt},
		{"contained_at", inc.ContainedAt}, {"as_of", inc.AsOf}, {"notices.deletion_deadline", inc.Notices.DeletionDeadline},
	} {
		if t.t != nil && !t.t.IsZero() {
			if err := checkYear(*t.t); err != nil {
				bad("%s: %v", t.field, err)
			}
		}
	}
	for _, ch := range c.Timeline {
		if err := checkYear(ch.ValidFrom); err != nil {
			bad("capacity.timeline: %s %s: valid_from: %v", ch.Instance, ch.Role, err)
			break
		}
	}
	if inc.AsOf != nil && !inc.WindowStart.IsZero() {
		if err := inc.CheckAsOf(*inc.AsOf); err != nil {
			bad("as_of: %v", err)
		}
	}
}

func checkYear(t time.Time) error {
	if y := t.UTC().Year(); y < MinYear || y >= MaxYear {
		return fmt.Errorf("%s is outside the years %d to %d", FormatTime(t), MinYear, MaxYear-1)
	}
	return nil
}

// CheckAsOf refuses a date for the notices (the incident's as_of, or the
// --as-of flag) that is not plausible or lies before the exposure window:
// notices cannot be sent before the leak began.
func (inc *Incident) CheckAsOf(t time.Time) error {
	if err := checkYear(t); err != nil {
		return err
	}
	if t.Before(inc.WindowStart) {
		return fmt.Errorf("%s is before window.start %s", FormatTime(t), FormatTime(inc.WindowStart))
	}
	return nil
}
