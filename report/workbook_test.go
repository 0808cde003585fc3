package report

import (
	"archive/zip"
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/xuri/excelize/v2"
)

// dbRows runs a query and returns its rows as CSV-style strings.
func dbRows(t *testing.T, db *sql.DB, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = csvString(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// csvString writes a value the way the CSV outputs do.
func csvString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return formatValue(x.UTC())
	case bool:
		return strconv.FormatBool(x)
	case int64, int32, int, uint64:
		return fmt.Sprint(x)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

func dbCount(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// sheetCSV reads a streamed sheet back as CSV-style strings: numbers as
// integers, date cells (checked to carry a date format) as RFC 3339.
func sheetCSV(t *testing.T, f *excelize.File, sheet string, cols []column) [][]string {
	t.Helper()
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for r, row := range rows[1:] {
		got := make([]string, len(cols))
		for i, c := range cols {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			cell, _ := excelize.CoordinatesToCellName(i+1, r+2)
			switch {
			case v == "":
			case c.kind == kTime:
				checkDateCell(t, f, sheet, cell)
				serial, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s!%s: date cell holds %q, not a number", sheet, cell, v)
				}
				tm, _ := excelize.ExcelDateToTime(serial, false)
				v = formatValue(tm.Round(time.Millisecond))
			case c.kind == kInt || c.kind == kID:
				if _, err := strconv.ParseInt(v, 10, 64); err != nil {
					t.Fatalf("%s!%s: number cell holds %q", sheet, cell, v)
				}
				if ct, _ := f.GetCellType(sheet, cell); ct == excelize.CellTypeSharedString || ct == excelize.CellTypeInlineString {
					t.Fatalf("%s!%s: number stored as text", sheet, cell)
				}
			case c.kind == kBool:
				ct, _ := f.GetCellType(sheet, cell)
				if ct != excelize.CellTypeBool {
					t.Fatalf("%s!%s: cell type %v, want bool", sheet, cell, ct)
				}
				v = map[string]string{"1": "true", "0": "false"}[v]
			}
			got[i] = v
		}
		out = append(out, got)
	}
	return out
}

// checkDateCell fails unless the cell is numeric with a date number format.
func checkDateCell(t *testing.T, f *excelize.File, sheet, cell string) {
	t.Helper()
	if ct, _ := f.GetCellType(sheet, cell); ct == excelize.CellTypeSharedString || ct == excelize.CellTypeInlineString {
		t.Fatalf("%s!%s: date stored as text", sheet, cell)
	}
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.CustomNumFmt == nil || !strings.Contains(*st.CustomNumFmt, "yyyy") {
		t.Fatalf("%s!%s: number format %v/%v is not a date format", sheet, cell, st.NumFmt, st.CustomNumFmt)
	}
}

func TestWorkbook(t *testing.T) {
	db, inc := newCase(t)
	out, _ := writeReport(t, db, inc)
	path := out + "/report.xlsx"
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	wantSheets := []string{"Summary", "Regulator", "Timeline", "Per day", "Tenants", "Exposures", "Affected requests", "Ingest", "Join", "Rejected rows"}
	if got := f.GetSheetList(); !reflect.DeepEqual(got, wantSheets) {
		t.Fatalf("sheets = %v, want %v", got, wantSheets)
	}
	if got := f.GetActiveSheetIndex(); got != 0 {
		t.Errorf("active sheet %d, want 0 (Summary)", got)
	}
	filters := map[string]bool{}
	for _, dn := range f.GetDefinedName() {
		if dn.Name == "_xlnm._FilterDatabase" {
			filters[dn.Scope] = true
		}
	}
	for _, sh := range wantSheets {
		panes, err := f.GetPanes(sh)
		if err != nil || !panes.Freeze || panes.YSplit != 1 {
			t.Errorf("%s: header row not frozen: %+v %v", sh, panes, err)
		}
		if !filters[sh] {
			t.Errorf("%s: no autofilter", sh)
		}
	}

	// The evidence and ledger sheets hold exactly the rows of their queries,
	// which for the evidence tables are the CSV outputs' queries.
	csvQuery := map[string]string{"Tenants": "out_tenants", "Exposures": "out_exposures", "Affected requests": "out_affected_requests",
		"Ingest": "report_ingest", "Join": "report_join", "Rejected rows": "report_rejected"}
	for _, tb := range append(evidenceTables(), ledgerTables()...) {
		t.Run(tb.sheet, func(t *testing.T) {
			rows, _ := f.GetRows(tb.sheet)
			var hdr []string
			for _, c := range tb.cols {
				hdr = append(hdr, c.name)
			}
			if len(rows) == 0 || !reflect.DeepEqual(rows[0], hdr) {
				t.Fatalf("header = %v, want %v", rows[0], hdr)
			}
			got := sheetCSV(t, f, tb.sheet, tb.cols)
			want := dbRows(t, db, query(csvQuery[tb.sheet]))
			if len(want) == 0 {
				t.Fatal("query returned no rows: the test case is too thin")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("sheet rows differ from the database\n got %v\nwant %v", got, want)
			}
		})
	}

	// Summary figures against independent counts.
	summary := map[string]string{}
	rows, _ := f.GetRows("Summary", excelize.Options{RawCellValue: true})
	for i, r := range rows[1:] {
		if len(r) == 3 {
			summary[r[1]] = r[2]
			if strings.HasSuffix(r[1], "(UTC)") && strings.Contains(r[1], "request") {
				cell, _ := excelize.CoordinatesToCellName(3, i+2)
				checkDateCell(t, f, "Summary", cell)
			}
		}
	}
	for label, q := range map[string]string{
		"Affected requests (triggers)":                            "SELECT count(*) FROM affected_requests",
		"Cross-tenant exposures":                                  "SELECT count(*) FROM exposures WHERE NOT self_exposure",
		"Self-exposures (same tenant, not a leak)":                "SELECT count(*) FROM exposures WHERE self_exposure",
		"Source tenants (data may have leaked to another tenant)": "SELECT count(DISTINCT source_tenant_id) FROM exposures WHERE NOT self_exposure",
		"Recipient tenants (may have received others' data)":      "SELECT count(DISTINCT tenant_id) FROM affected_requests",
		"Rows rejected (file, line, reason kept)":                 "SELECT count(*) FROM rejected_rows",
		"Notices accepted by the mail server":                     "SELECT count(DISTINCT notice_id) FROM send_ledger WHERE status = 'accepted'",
	} {
		if got, want := summary[label], fmt.Sprint(dbCount(t, db, q)); got != want {
			t.Errorf("Summary %q = %q, want %s", label, got, want)
		}
	}

	// Regulator, in the filing's language (the test provider is in FR): the
	// 72-hour deadline is a date cell, aware_at + 72 h.
	fr := catalog.Get("fr")
	reg, _ := f.GetRows("Regulator")
	var found bool
	for i, r := range reg {
		if len(r) > 2 && r[1] == fr.MustT("sheet.deadline") {
			found = true
			cell, _ := excelize.CoordinatesToCellName(3, i+1)
			checkDateCell(t, f, "Regulator", cell)
			raw, _ := f.GetCellValue("Regulator", cell, excelize.Options{RawCellValue: true})
			serial, _ := strconv.ParseFloat(raw, 64)
			tm, _ := excelize.ExcelDateToTime(serial, false)
			if want := inc.AwareAt.Add(72 * time.Hour); !tm.Round(time.Second).Equal(want) {
				t.Errorf("deadline = %v, want %v", tm, want)
			}
		}
	}
	if !found {
		t.Error("Regulator sheet has no 72-hour deadline row")
	}
	for _, key := range []string{"filing_type", "contact_dpo", "breach_type", "consequences", "measures_taken", "measures_proposed", "deadline_met", "delay_reasons"} {
		if item := fr.MustT("sheet." + key); !hasRow(reg, 1, item) {
			t.Errorf("Regulator sheet lacks %q", item)
		}
	}

	// Per day equals its query, and the chart plots it.
	days := dbRows(t, db, query("report_daily"), inc.WindowStart, inc.WindowEnd)
	pd, _ := f.GetRows("Per day")
	if len(pd)-1 != len(days) {
		t.Fatalf("Per day has %d rows, want %d", len(pd)-1, len(days))
	}
	for i, d := range days {
		if pd[i+1][0] != d[0][:10] || pd[i+1][1] != d[1] {
			t.Errorf("Per day row %d = %v, want %v", i+1, pd[i+1], d)
		}
		checkDateCell(t, f, "Per day", fmt.Sprintf("A%d", i+2))
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	parts := map[string]string{}
	for _, zf := range z.File {
		parts[zf.Name] = readZipPart(t, zf)
	}
	chart, ok := parts["xl/charts/chart1.xml"]
	if !ok || !strings.Contains(chart, "Per day&#39;!$B$2:$B$") {
		t.Errorf("no chart of affected requests per day (chart1.xml present: %v)", ok)
	}
	if _, ok := parts["xl/drawings/drawing1.xml"]; !ok {
		t.Error("no drawing part holding the chart")
	}
}

func hasRow(rows [][]string, col int, want string) bool {
	for _, r := range rows {
		if len(r) > col && r[col] == want {
			return true
		}
	}
	return false
}

// TestWorkbookSplitsLongSheets: a table longer than a sheet continues on
// numbered sheets, every row kept once, in order.
func TestWorkbookSplitsLongSheets(t *testing.T) {
	db, inc := newCase(t)
	old := maxSheetRows
	maxSheetRows = 5
	defer func() { maxSheetRows = old }()
	out, _ := writeReport(t, db, inc)
	f, err := excelize.OpenFile(out + "/report.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got [][]string
	ex := evidenceTables()[1]
	for _, sh := range []string{"Exposures", "Exposures (2)", "Exposures (3)", "Exposures (4)"} {
		if idx, _ := f.GetSheetIndex(sh); idx < 0 {
			t.Fatalf("no sheet %q in %v", sh, f.GetSheetList())
		}
		got = append(got, sheetCSV(t, f, sh, ex.cols)...)
	}
	if want := dbRows(t, db, query("out_exposures")); !reflect.DeepEqual(got, want) {
		t.Errorf("split sheets hold %d rows, want the %d rows of out_exposures in order", len(got), len(want))
	}
}

func readZipPart(t *testing.T, zf *zip.File) string {
	t.Helper()
	rc, err := zf.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestEmptyCase: a case with no analysis yet (nothing affected, no
// notices) still gives every file, with zeros rather than errors.
func TestEmptyCase(t *testing.T) {
	db, inc := newCase(t)
	for _, tbl := range []string{"requests", "rejected_rows", "affected_requests", "exposures", "tenants", "analysis_runs", "notices", "send_ledger", "ingest_files"} {
		if _, err := db.Exec("DELETE FROM " + tbl); err != nil {
			t.Fatal(err)
		}
	}
	out, res := writeReport(t, db, inc)
	if len(res.Files) != 8 || res.AffectedRequests != 0 {
		t.Fatalf("files %v, affected %d", res.Files, res.AffectedRequests)
	}
	f, err := excelize.OpenFile(out + "/report.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, _ := f.GetRows("Regulator")
	for _, r := range reg {
		if fr := catalog.Get("fr"); len(r) > 2 && r[1] == fr.MustT("sheet.filing_type") && r[2] != fr.MustT("filing.initial") {
			t.Errorf("filing type without an analysis = %q, want initial", r[2])
		}
	}
	if rows, _ := f.GetRows("Exposures"); len(rows) != 1 {
		t.Errorf("Exposures sheet has %d rows, want the header only", len(rows))
	}
}
