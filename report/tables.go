package report

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
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
	// Set by exported once the table's Parquet file is written: the
	// sheet, the Arrow file and the page then read that file (written
	// sorted, read in its order) instead of sorting the table again, and
	// the Arrow file is written from the same batches as the sheet.
	count    string // a query giving the table's row count; "" counts sql
	arrowOut string // the Arrow IPC file to write from the streamed rows
	parquet  string // the Parquet file sql reads
}

// exported returns the table read back from its Parquet export at path,
// its rows going to the Arrow file arrowPath as they are streamed.
func (t table) exported(path, arrowPath string) table {
	src := "SELECT * FROM read_parquet('" + strings.ReplaceAll(path, "'", "''") + "')"
	t.sql, t.count, t.arrowOut, t.parquet = src, "SELECT count(*) FROM ("+src+")", arrowPath, path
	return t
}

// pieceRows is about how many rows of a Parquet file one query reads: the
// driver holds a query's whole result before handing out its first batch,
// so the exposures (3.3M rows at 10M requests) are read in pieces.
var pieceRows int64 = 1 << 20

// pieces returns the queries that read the table's rows in order: for a
// Parquet file, runs of whole row groups (a batch never spans a row group,
// so the batches are those of one query reading it all), else sql.
func (t table) pieces(ctx context.Context, db *sql.DB) ([]string, error) {
	if t.parquet == "" {
		return []string{t.sql}, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('"+
		strings.ReplaceAll(t.parquet, "'", "''")+"') ORDER BY row_group_id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	var from, to int64
	cut := func() {
		out = append(out, fmt.Sprintf("%s WHERE file_row_number >= %d AND file_row_number < %d", t.sql, from, to))
		from = to
	}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		if to > from && to+n-from > pieceRows {
			cut()
		}
		to += n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if to > from || len(out) == 0 {
		cut()
	}
	return out, nil
}

// countSQL is the query counting the table's rows.
func (t table) countSQL() string {
	if t.count != "" {
		return t.count
	}
	return "SELECT count(*) FROM (" + t.sql + ")"
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
	// The report is written in English; its labels are the catalogue's.
	c := reportCatalog()
	lbl := func(k string) string { return c.MustT("report.summary." + k) }
	add(lbl("incident"), lbl("incident"), inc.ID)
	add(lbl("incident"), lbl("title"), inc.Title)
	add(lbl("incident"), lbl("models_in_scope"), strings.Join(inc.Models, ", "))
	add(lbl("incident"), lbl("exposure_window_start_utc"), inc.WindowStart)
	add(lbl("incident"), lbl("exposure_window_end_utc_exclusive"), inc.WindowEnd)
	add(lbl("incident"), lbl("prefill_kv_pool_tokens_default"), inc.Capacity.PrefillPoolTokens)
	if inc.Capacity.MaxContextTokens > 0 {
		add(lbl("incident"), lbl("maximum_context_accepted_tokens"), inc.Capacity.MaxContextTokens)
	}
	add(lbl("incident"), lbl("contamination_model"), c.MustT("report.summary.contamination_value", "model", inc.Contamination.Model, "allocator", inc.Contamination.Allocator, "page_size", strconv.FormatInt(inc.Contamination.PageSize, 10)))
	add(lbl("incident"), lbl("report_as_of_utc"), d.asOf)
	add(lbl("findings"), lbl("affected_requests_triggers"), s.AffectedRequests)
	add(lbl("findings"), lbl("recipient_tenants_may_have_received_others_data"), s.RecipientTenants)
	add(lbl("findings"), lbl("source_tenants_data_may_have_leaked_to_another_t"), s.SourceTenants)
	add(lbl("findings"), lbl("tenants_in_both_roles"), s.BothTenants)
	for _, t := range d.tiers {
		add(lbl("findings"), c.MustT("report.summary.source_tenants_tier", "tier", t.Tier), t.SourceTenants)
	}
	add(lbl("findings"), lbl("source_requests_cross_tenant"), s.SourceRequests)
	add(lbl("findings"), lbl("exposures_source_trigger_pairs"), s.Exposures)
	add(lbl("findings"), lbl("cross_tenant_exposures"), s.CrossExposures)
	add(lbl("findings"), lbl("self_exposures_same_tenant_not_a_leak"), s.SelfExposures)
	for _, t := range d.tiers {
		add(lbl("findings"), c.MustT("report.summary.cross_exposures_tier", "tier", t.Tier), t.CrossExposures)
	}
	add(lbl("findings"), lbl("affected_requests_without_a_decode_instance"), s.AffectedNoDecode)
	if s.JoinedRequests > 0 {
		add(lbl("findings"), lbl("affected_requests_whose_prefill_record_cut_the_p"), s.AffectedCut)
		add(lbl("findings"), lbl("calls_where_the_capacity_test_and_the_cut_disagr"), s.TriggerDisagreements)
		add(lbl("findings"), lbl("unattributed_affected_requests_no_gateway_record"), s.UnattributedAffected)
		add(lbl("findings"), lbl("unattributed_source_requests_owner_unknown"), s.UnattributedSources)
	}
	add(lbl("findings"), lbl("kv_slots_of_unknown_owner_read_by_triggers"), s.UnknownSlots)
	if s.FirstTrigger != nil {
		add(lbl("findings"), lbl("first_affected_request_utc"), *s.FirstTrigger)
		add(lbl("findings"), lbl("last_affected_request_utc"), *s.LastTrigger)
	}
	add(lbl("evidence"), lbl("input_files"), s.Files)
	add(lbl("evidence"), lbl("input_bytes"), s.Bytes)
	add(lbl("evidence"), lbl("rows_read"), s.RowsRead)
	add(lbl("evidence"), lbl("rows_loaded"), s.RowsLoaded)
	add(lbl("evidence"), lbl("rows_rejected_file_line_reason_kept"), s.RowsRejected)
	add(lbl("evidence"), lbl("duplicate_rows"), s.RowsDuplicate)
	add(lbl("evidence"), lbl("requests_in_the_case"), s.Requests)
	if s.JoinedRequests > 0 {
		add(lbl("evidence"), lbl("requests_joined_from_gateway_and_engine_records"), s.JoinedRequests)
		add(lbl("evidence"), lbl("unattributed_requests_engine_records_no_gateway"), s.UnattributedRequests)
	}
	add(lbl("notices"), lbl("notices_drafted"), s.NoticesDrafted)
	add(lbl("notices"), lbl("tenant_notices_drafted"), s.TenantNotices)
	add(lbl("notices"), lbl("notices_ready_to_send"), s.NoticesReady)
	add(lbl("notices"), lbl("notices_blocked_by_the_isolation_check"), s.NoticesBlocked)
	add(lbl("notices"), lbl("tenants_without_a_contact_address"), s.NoticesCannotNotify)
	add(lbl("notices"), lbl("notices_accepted_by_the_mail_server"), s.NoticesSent)
	add(lbl("notices"), lbl("notices_whose_last_attempt_failed"), s.NoticesFailed)
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
