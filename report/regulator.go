package report

import (
	"fmt"
	"strings"
	"time"
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

// Default wording, written for this class of bug; the incident file's
// notices section overrides it.
var (
	defaultCategories   = []string{"prompt text", "generated text"}
	defaultConsequences = "Parts of prompts sent by one customer to the model may have been shown to another customer in a generated answer. " +
		"Depending on what the prompts held, this can expose personal data, confidential business information or credentials of the persons concerned."
	defaultMeasuresTaken = []string{
		"model withdrawn, then restored with a prefill KV pool larger than the maximum context length",
		"affected requests and exposed requests identified from the request logs (this report)",
	}
	defaultMeasuresPlanned = []string{
		"reject over-long requests before any transfer between prefill and decode machines",
		"compare the KV pool size with the maximum context length at every machine start and after any model or memory change",
		"enable KV cache integrity checks",
		"notify every tenant whose data may have been disclosed and every tenant that may have received such data",
	}
)

// deadlineHours is the Art. 33(1) notification delay from awareness.
const deadlineHours = 72

func regulatorFields(d *caseData) []RegField {
	inc, s := d.inc, d.summary
	var out []RegField
	add := func(section, item string, value any, basis string) {
		out = append(out, RegField{section, item, value, basis})
	}
	opt := func(t *time.Time) any {
		if t == nil {
			return "not recorded"
		}
		return t.UTC()
	}

	complete := inc.ContainedAt != nil && !inc.ContainedAt.After(d.asOf) && s.AnalysisRuns > 0
	filing := "initial (Art. 33(4): information provided in phases; a complete notification will follow)"
	if complete {
		filing = "complete"
	}
	add("Notification", "Filing type", filing, "Art. 33(4)")
	add("Notification", "Incident reference", inc.ID, "")
	add("Notification", "Title", inc.Title, "")
	add("Notification", "Report as of (UTC)", d.asOf, "")

	org := inc.Provider.Name
	if org == "" {
		org = "not stated in the incident file"
	}
	add("Organisation", "Organisation (service provider)", org, "")
	if inc.Provider.Country != "" {
		add("Organisation", "Country of main establishment", inc.Provider.Country, "Art. 56")
	}
	contact := inc.Provider.DPOEmail
	kind := "data protection officer"
	if contact == "" {
		contact, kind = inc.Provider.Email, "contact point"
	}
	if contact == "" {
		contact = "not stated in the incident file"
	}
	add("Organisation", "Contact point ("+kind+")", contact, "Art. 33(3)(b)")

	add("Times (UTC)", "Breach start (exposure window start)", inc.WindowStart, "")
	add("Times (UTC)", "Breach end (exposure window end)", inc.WindowEnd, "")
	add("Times (UTC)", "First affected request", opt(s.FirstTrigger), "case database")
	add("Times (UTC)", "Last affected request", opt(s.LastTrigger), "case database")
	add("Times (UTC)", "Discovery", opt(inc.DiscoveredAt), "")
	add("Times (UTC)", "Awareness (start of the 72-hour clock)", opt(inc.AwareAt), "Art. 33(1)")
	add("Times (UTC)", "Containment (fix or withdrawal)", opt(inc.ContainedAt), "")

	add("Nature", "Type of breach", "confidentiality (unauthorised disclosure); no loss of integrity or availability of the data is known", "Art. 33(3)(a)")
	add("Nature", "Nature of the breach",
		fmt.Sprintf("In the shared inference service for %s, prompts longer than the prefill KV pool were silently replaced by a 1-token input; "+
			"the decode machine then generated answers from KV memory left by earlier requests, possibly of other customers.",
			strings.Join(inc.Models, ", ")), "Art. 33(3)(a)")
	add("Nature", "Categories of data subjects",
		"customers (tenants) of the service, and the persons whose data those customers placed in their prompts", "Art. 33(3)(a)")
	add("Nature", "Approximate number of data subjects",
		"unknown at the level of persons; counted by tenant below", "Art. 33(3)(a)")
	add("Nature", "Tenants whose data may have been disclosed to another tenant", s.SourceTenants, "Art. 33(3)(a)")
	add("Nature", "Tenants that may have received another tenant's data", s.RecipientTenants, "Art. 33(3)(a)")
	cats := inc.Notices.DataCategories
	if len(cats) == 0 {
		cats = defaultCategories
	}
	add("Nature", "Categories of personal data records", strings.Join(cats, "; "), "Art. 33(3)(a)")
	add("Nature", "Requests whose data may have been disclosed (approximate number of records)", s.SourceRequests, "Art. 33(3)(a)")
	add("Nature", "Responses that may hold another tenant's data (affected requests)", s.AffectedRequests, "Art. 33(3)(a)")
	for _, t := range d.tiers {
		add("Nature", "Cross-tenant exposures, tier "+t.Tier, t.CrossExposures, "case database")
	}

	cons := inc.Notices.Consequences
	if cons == "" {
		cons = defaultConsequences
	}
	add("Consequences", "Likely consequences", cons, "Art. 33(3)(c)")
	taken := inc.Notices.MeasuresTaken
	if len(taken) == 0 {
		taken = defaultMeasuresTaken
	}
	planned := inc.Notices.MeasuresPlanned
	if len(planned) == 0 {
		planned = defaultMeasuresPlanned
	}
	add("Measures", "Measures taken", strings.Join(taken, "\n"), "Art. 33(3)(d)")
	add("Measures", "Measures proposed", strings.Join(planned, "\n"), "Art. 33(3)(d)")
	if inc.Notices.DeletionDeadline != nil {
		add("Measures", "Recipients asked to delete the data by", inc.Notices.DeletionDeadline.UTC(), "Art. 33(3)(d)")
	}

	comm := "not yet drafted"
	if s.NoticesDrafted > 0 {
		comm = fmt.Sprintf("%d tenant notices drafted (%d ready, %d blocked by the isolation check, %d without a contact address); %d notices accepted by the mail server",
			s.TenantNotices, s.NoticesReady, s.NoticesBlocked, s.NoticesCannotNotify, s.NoticesSent)
	}
	add("Communication", "Communication to data subjects and tenants", comm, "Art. 34")
	add("Communication", "Tenant notices drafted", s.TenantNotices, "Art. 34")
	add("Communication", "Notices accepted by the mail server", s.NoticesSent, "Art. 34")

	if inc.AwareAt != nil {
		deadline := inc.AwareAt.Add(deadlineHours * time.Hour).UTC()
		add("Deadline", "72-hour deadline (aware_at + 72 h)", deadline, "Art. 33(1)")
		status, delay := deadlineStatus(deadline, s.RegulatorSentAt, d.asOf, inc.Notices.DelayReasons)
		add("Deadline", "Deadline met", status, "Art. 33(1)")
		add("Deadline", "Reasons for delay", delay, "Art. 33(1)")
	}
	return out
}

// deadlineStatus says whether the 72-hour deadline is met: by the regulator
// notice's acceptance when the ledger has it, else by filing this report at
// asOf; when it is missed, delay is the incident file's reasons or a
// reminder that they are required.
func deadlineStatus(deadline time.Time, sentAt *time.Time, asOf time.Time, reasons string) (status, delay string) {
	var met bool
	switch {
	case sentAt != nil && !sentAt.After(deadline):
		status, met = "yes: regulator notice accepted "+sentAt.UTC().Format(time.RFC3339), true
	case sentAt != nil:
		status = fmt.Sprintf("no: regulator notice accepted %s, %s after the deadline", sentAt.UTC().Format(time.RFC3339), hours(sentAt.Sub(deadline)))
	case !asOf.After(deadline):
		status, met = fmt.Sprintf("yes, if filed as of %s (%s before the deadline)", asOf.UTC().Format(time.RFC3339), hours(deadline.Sub(asOf))), true
	default:
		status = fmt.Sprintf("no: as of %s the deadline passed %s ago", asOf.UTC().Format(time.RFC3339), hours(asOf.Sub(deadline)))
	}
	switch {
	case met:
		return status, "not applicable"
	case reasons != "":
		return status, reasons
	}
	return status, "required (Art. 33(1)), and not given: set notices.delay_reasons in the incident file (the regulator notice uses leakmap's default wording until then)"
}

func hours(d time.Duration) string {
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
