package report

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/leakmap/leakmap/incident"
)

// kind is how a column is typed in the workbook and the page.
type kind int

const (
	kText kind = iota
	kInt       // a count: thousands separators
	kID        // a number that names something (file id, line): no separators
	kTime      // TIMESTAMPTZ, written as a date-time cell in UTC
	kDate      // a UTC day
	kBool
)

type column struct {
	name  string
	kind  kind
	width float64
}

// table is a query whose rows go to a workbook sheet (and, for the evidence
// tables, to the Parquet and Arrow exports).
type table struct {
	file  string // export base name; "" when not exported
	sheet string
	sql   string
	cols  []column
}

// typed wraps an out_*.sql query (the CSV contract, times as RFC 3339 text)
// so its times and booleans come back typed; rows and order are unchanged,
// so the CSV, the sheets and the exports hold the same rows.
func typed(name, replace string) string {
	return "SELECT * REPLACE (" + replace + ") FROM (" + query(name) + ")"
}

// evidenceTables are the analysis outputs, shared with the CSV files.
func evidenceTables() []table {
	return []table{
		{file: "tenants", sheet: "Tenants",
			sql: typed("out_tenants", "CAST(first_ts AS TIMESTAMPTZ) AS first_ts, CAST(last_ts AS TIMESTAMPTZ) AS last_ts"),
			cols: []column{{"tenant_id", kText, 22}, {"role", kText, 11}, {"strongest_tier", kText, 14},
				{"affected_requests", kInt, 18}, {"exposed_requests", kInt, 17}, {"first_ts", kTime, 20}, {"last_ts", kTime, 20}}},
		{file: "exposures", sheet: "Exposures",
			sql: typed("out_exposures", "self_exposure = 'true' AS self_exposure"),
			cols: []column{{"source_request_id", kText, 24}, {"trigger_request_id", kText, 24}, {"source_tenant_id", kText, 20},
				{"recipient_tenant_id", kText, 20}, {"tier", kText, 11}, {"self_exposure", kBool, 13}, {"evidence", kText, 40}}},
		{file: "affected_requests", sheet: "Affected requests",
			sql: typed("out_affected_requests", "CAST(ts AS TIMESTAMPTZ) AS ts"),
			cols: []column{{"request_id", kText, 24}, {"tenant_id", kText, 20}, {"ts", kTime, 20}, {"model", kText, 14},
				{"prompt_tokens", kInt, 14}, {"capacity_tokens", kInt, 15}, {"prefill_instance", kText, 16},
				{"decode_instance", kText, 16}, {"unknown_slots", kInt, 14}, {"evidence", kText, 26}}},
	}
}

func ledgerTables() []table {
	return []table{
		{sheet: "Ingest", sql: query("report_ingest"),
			cols: []column{{"file_id", kID, 8}, {"path", kText, 40}, {"name", kText, 24}, {"format", kText, 8},
				{"compression", kText, 11}, {"preset", kText, 11}, {"size_bytes", kInt, 14}, {"sha256", kText, 66},
				{"rows_read", kInt, 12}, {"rows_loaded", kInt, 12}, {"rows_rejected", kInt, 13}, {"rows_duplicate", kInt, 14},
				{"name_reused", kBool, 12}}},
		{sheet: "Join", sql: query("report_join"),
			cols: []column{{"source", kText, 14}, {"layout", kText, 20}, {"role", kText, 9}, {"outcome", kText, 11},
				{"reason", kText, 60}, {"records", kInt, 12}}},
		{sheet: "Rejected rows", sql: query("report_rejected"),
			cols: []column{{"file_id", kID, 8}, {"path", kText, 40}, {"line", kID, 10}, {"reason", kText, 60}}},
	}
}

// scanner reads one row of a table's query into typed Go values: string,
// int64, time.Time (UTC), bool, or nil for NULL.
type scanner struct {
	cols []column
	dst  []any
}

func newScanner(cols []column) *scanner {
	s := &scanner{cols: cols, dst: make([]any, len(cols))}
	for i, c := range cols {
		switch c.kind {
		case kInt, kID:
			s.dst[i] = new(sql.NullInt64)
		case kTime, kDate:
			s.dst[i] = new(sql.NullTime)
		case kBool:
			s.dst[i] = new(sql.NullBool)
		default:
			s.dst[i] = new(sql.NullString)
		}
	}
	return s
}

func (s *scanner) scan(rows *sql.Rows, out []any) error {
	if err := rows.Scan(s.dst...); err != nil {
		return err
	}
	for i, d := range s.dst {
		out[i] = nil
		switch v := d.(type) {
		case *sql.NullInt64:
			if v.Valid {
				out[i] = v.Int64
			}
		case *sql.NullTime:
			if v.Valid {
				out[i] = v.Time.UTC()
			}
		case *sql.NullBool:
			if v.Valid {
				out[i] = v.Bool
			}
		case *sql.NullString:
			if v.Valid {
				out[i] = v.String
			}
		}
	}
	return nil
}

// SumItem is one figure of the summary, shared by the Summary sheet and
// the page.
type SumItem struct {
	Group string
	Label string
	Value any // string, int64 or time.Time
}

func summaryItems(d *caseData) []SumItem {
	inc, s := d.inc, d.summary
	var out []SumItem
	add := func(g, l string, v any) { out = append(out, SumItem{g, l, v}) }
	add("Incident", "Incident", inc.ID)
	add("Incident", "Title", inc.Title)
	add("Incident", "Models in scope", strings.Join(inc.Models, ", "))
	add("Incident", "Exposure window start (UTC)", inc.WindowStart)
	add("Incident", "Exposure window end (UTC, exclusive)", inc.WindowEnd)
	add("Incident", "Prefill KV pool (tokens, default)", inc.Capacity.PrefillPoolTokens)
	if inc.Capacity.MaxContextTokens > 0 {
		add("Incident", "Maximum context accepted (tokens)", inc.Capacity.MaxContextTokens)
	}
	add("Incident", "Contamination model", fmt.Sprintf("%s, allocator %s, page size %d", inc.Contamination.Model, inc.Contamination.Allocator, inc.Contamination.PageSize))
	add("Incident", "Report as of (UTC)", d.asOf)
	add("Findings", "Affected requests (triggers)", s.AffectedRequests)
	add("Findings", "Recipient tenants (may have received others' data)", s.RecipientTenants)
	add("Findings", "Source tenants (data may have leaked to another tenant)", s.SourceTenants)
	add("Findings", "Tenants in both roles", s.BothTenants)
	for _, t := range d.tiers {
		add("Findings", "Source tenants, strongest tier "+t.Tier, t.SourceTenants)
	}
	add("Findings", "Source requests (cross-tenant)", s.SourceRequests)
	add("Findings", "Exposures (source → trigger pairs)", s.Exposures)
	add("Findings", "Cross-tenant exposures", s.CrossExposures)
	add("Findings", "Self-exposures (same tenant, not a leak)", s.SelfExposures)
	for _, t := range d.tiers {
		add("Findings", "Cross-tenant exposures, tier "+t.Tier, t.CrossExposures)
	}
	add("Findings", "Affected requests without a decode instance", s.AffectedNoDecode)
	if s.JoinedRequests > 0 {
		add("Findings", "Affected requests whose prefill record cut the prompt", s.AffectedCut)
		add("Findings", "Calls where the capacity test and the cut disagree (trigger_disagreements.csv)", s.TriggerDisagreements)
		add("Findings", "Unattributed affected requests (no gateway record names the tenant; never notified)", s.UnattributedAffected)
		add("Findings", "Unattributed source requests (owner unknown)", s.UnattributedSources)
	}
	add("Findings", "KV slots of unknown owner read by triggers", s.UnknownSlots)
	if s.FirstTrigger != nil {
		add("Findings", "First affected request (UTC)", *s.FirstTrigger)
		add("Findings", "Last affected request (UTC)", *s.LastTrigger)
	}
	add("Evidence", "Input files", s.Files)
	add("Evidence", "Input bytes", s.Bytes)
	add("Evidence", "Rows read", s.RowsRead)
	add("Evidence", "Rows loaded", s.RowsLoaded)
	add("Evidence", "Rows rejected (file, line, reason kept)", s.RowsRejected)
	add("Evidence", "Duplicate rows", s.RowsDuplicate)
	add("Evidence", "Requests in the case", s.Requests)
	if s.JoinedRequests > 0 {
		add("Evidence", "Requests joined from gateway and engine records (Join sheet)", s.JoinedRequests)
		add("Evidence", "Unattributed requests (engine records no gateway record claims)", s.UnattributedRequests)
	}
	add("Notices", "Notices drafted", s.NoticesDrafted)
	add("Notices", "Tenant notices drafted", s.TenantNotices)
	add("Notices", "Notices ready to send", s.NoticesReady)
	add("Notices", "Notices blocked by the isolation check", s.NoticesBlocked)
	add("Notices", "Tenants without a contact address", s.NoticesCannotNotify)
	add("Notices", "Notices accepted by the mail server", s.NoticesSent)
	add("Notices", "Notices whose last attempt failed", s.NoticesFailed)
	return out
}

// formatValue writes a value as the page shows it.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return thousands(x)
	case time.Time:
		return incident.FormatTime(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	default:
		return fmt.Sprint(x)
	}
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
