package report

import (
	"slices"
	"strings"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
)

// RegField is one row of the Regulator sheet: an item of GDPR Art. 33(3)
// or of the usual authority breach form. Value is a string, an int64 or a
// time.Time (UTC), so the workbook writes real number and date cells.
type RegField struct {
	Section string
	Item    string
	Value   any
	Basis   string
}

// regulatorFields are the sheet's rows, in the regulator notice's language,
// from the same facts as the notice (package filing): filing type, figures,
// notice counts, deadline and delay reasons.
func regulatorFields(d *caseData) ([]RegField, error) {
	inc, f := d.inc, d.facts
	lang := filing.Language(inc)
	c := catalog.Get(lang)
	w, err := filing.WordingFor(lang, inc)
	if err != nil {
		return nil, err
	}
	var out []RegField
	add := func(section, item string, value any, basis string) {
		out = append(out, RegField{c.MustT("sheet.section." + section), c.MustT("sheet." + item), value, basis})
	}
	opt := func(t *time.Time) any {
		if t == nil {
			return c.MustT("sheet.not_recorded")
		}
		return t.UTC()
	}
	count := func(n int64) any { return n }

	add("notification", "filing_type", c.MustT("filing."+f.Filing), "Art. 33(4)")
	add("notification", "reference", inc.ID, "")
	add("notification", "title", w.Title, "")
	add("notification", "as_of", d.asOf, "")

	org := inc.Provider.Name
	if org == "" {
		org = c.MustT("sheet.not_stated")
	}
	add("organisation", "organisation", org, "")
	if inc.Provider.Country != "" {
		add("organisation", "country", inc.Provider.Country, "Art. 56")
	}
	contact, item := inc.Provider.DPOEmail, "contact_dpo"
	if contact == "" {
		contact, item = inc.Provider.Email, "contact_point"
	}
	if contact == "" {
		contact = c.MustT("sheet.not_stated")
	}
	add("organisation", item, contact, "Art. 33(3)(b)")

	add("times", "breach_start", inc.WindowStart, "")
	add("times", "breach_end", inc.WindowEnd, "")
	add("times", "first_affected", opt(f.FirstAffected), c.MustT("sheet.basis_case"))
	add("times", "last_affected", opt(f.LastAffected), c.MustT("sheet.basis_case"))
	add("times", "discovery", opt(inc.DiscoveredAt), "")
	add("times", "awareness", opt(inc.AwareAt), "Art. 33(1)")
	add("times", "containment", opt(inc.ContainedAt), "")

	add("nature", "breach_type", c.MustT("sheet.breach_type_value"), "Art. 33(3)(a)")
	add("nature", "nature", c.MustT("sheet.nature_value", "models", strings.Join(inc.Models, c.MustT("common.list_sep"))), "Art. 33(3)(a)")
	add("nature", "subject_categories", c.MustT("sheet.subject_categories_value"), "Art. 33(3)(a)")
	add("nature", "subject_number", c.MustT("sheet.subject_number_value"), "Art. 33(3)(a)")
	add("nature", "tenants_total", count(f.TenantsTotal), "Art. 33(3)(a)")
	add("nature", "source_tenants", count(f.SourceTenants), "Art. 33(3)(a)")
	add("nature", "recipient_tenants", count(f.RecipientTenants), "Art. 33(3)(a)")
	add("nature", "data_categories", strings.Join(w.DataCategories, c.MustT("common.list_sep")), "Art. 33(3)(a)")
	add("nature", "exposed_requests", count(f.ExposedRequests), "Art. 33(3)(a)")
	add("nature", "affected_requests", count(f.AffectedRequests), "Art. 33(3)(a)")
	for _, t := range []struct {
		tier string
		n    int64
	}{{"confirmed", f.Confirmed}, {"probable", f.Probable}, {"possible", f.Possible}} {
		out = append(out, RegField{c.MustT("sheet.section.nature"), c.MustT("sheet.tier_exposures", "tier", c.MustT("tier."+t.tier)), t.n, c.MustT("sheet.basis_case")})
	}
	add("nature", "self_exposures", count(f.SelfExposures), c.MustT("sheet.basis_case"))

	add("consequences", "consequences", w.Consequences, "Art. 33(3)(c)")
	add("measures", "measures_taken", strings.Join(w.MeasuresTaken, "\n"), "Art. 33(3)(d)")
	add("measures", "measures_proposed", strings.Join(w.MeasuresPlanned, "\n"), "Art. 33(3)(d)")
	if inc.Notices.DeletionDeadline != nil {
		add("measures", "deletion_by", inc.Notices.DeletionDeadline.UTC(), "Art. 33(3)(d)")
	}

	n := f.Notices
	comm := c.MustT("regulator.communication.none")
	if n.Drafted > 0 {
		comm = c.MustT("regulator.communication.text",
			"drafted", c.MustT("regulator.communication.drafted", "n", n.Drafted), "ready", c.MustT("regulator.communication.ready", "n", n.Ready),
			"blocked", c.MustT("regulator.communication.blocked", "n", n.Blocked), "cannot", c.MustT("regulator.communication.cannot", "n", n.CannotNotify))
	}
	add("communication", "communication", comm, "Art. 34")
	add("communication", "tenant_notices", count(n.Drafted), "Art. 34")
	add("communication", "notices_ready", count(n.Ready), "Art. 34")
	add("communication", "notices_blocked", count(n.Blocked), "Art. 34")
	add("communication", "notices_cannot", count(n.CannotNotify), "Art. 34")
	add("communication", "notices_sent", count(n.Sent), "Art. 34")

	if f.Deadline == nil {
		add("deadline", "deadline", c.MustT("sheet.no_aware"), "Art. 33(1)")
		return out, nil
	}
	add("deadline", "deadline", *f.Deadline, "Art. 33(1)")
	status, reasons := deadlineStatus(c, f, w)
	add("deadline", "deadline_met", status, "Art. 33(1)")
	add("deadline", "delay_reasons", reasons, "Art. 33(1)")
	return out, nil
}

// deadlineStatus says whether the 72-hour deadline is met, and the delay
// reasons: the incident file's when it is missed, else a reminder that
// they are required.
func deadlineStatus(c *catalog.Catalog, f *filing.Facts, w filing.Wording) (status, reasons string) {
	switch {
	case f.SentAt != nil && !f.Late:
		status = c.MustT("sheet.met_sent", "t", *f.SentAt)
	case f.SentAt != nil:
		status = c.MustT("sheet.late_sent", "t", *f.SentAt, "late", c.Duration(f.LateBy))
	case !f.Late:
		status = c.MustT("sheet.met_asof", "t", f.AsOf, "early", c.Duration(f.Deadline.Sub(f.AsOf)))
	default:
		status = c.MustT("sheet.late_asof", "t", f.AsOf, "late", c.Duration(f.LateBy))
	}
	switch {
	case !f.Late:
		return status, c.MustT("sheet.not_applicable")
	case slices.Contains(w.Custom, "delay_reasons"):
		return status, w.DelayReasons
	}
	return status, c.MustT("sheet.reasons_missing")
}
