package report

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	kflate "github.com/klauspost/compress/flate"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
	"github.com/xuri/excelize/v2"
)

// maxSheetRows is Excel's row limit less the header row; longer tables
// continue on sheets named "Exposures (2)", "Exposures (3)", ...
var maxSheetRows = 1048575

type styles struct {
	header, date, day, count, id, wrap int
	dateLeft, countLeft                int // free values of Summary and Regulator, top-left
}

func newStyles(f *excelize.File) (*styles, error) {
	var s styles
	var err error
	mk := func(dst *int, st *excelize.Style) {
		if err == nil {
			*dst, err = f.NewStyle(st)
		}
	}
	dateFmt, dayFmt := "yyyy-mm-dd hh:mm:ss", "yyyy-mm-dd"
	mk(&s.header, &excelize.Style{Font: &excelize.Font{Bold: true},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"DDE4EE"}},
		Border: []excelize.Border{{Type: "bottom", Color: "7F8FA6", Style: 1}}})
	mk(&s.date, &excelize.Style{CustomNumFmt: &dateFmt})
	mk(&s.day, &excelize.Style{CustomNumFmt: &dayFmt})
	mk(&s.count, &excelize.Style{NumFmt: 3})
	mk(&s.id, &excelize.Style{NumFmt: 1})
	mk(&s.wrap, &excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	topLeft := &excelize.Alignment{Horizontal: "left", Vertical: "top"}
	mk(&s.dateLeft, &excelize.Style{CustomNumFmt: &dateFmt, Alignment: topLeft})
	mk(&s.countLeft, &excelize.Style{NumFmt: 3, Alignment: topLeft})
	return &s, err
}

func (s *styles) forKind(k kind) int {
	switch k {
	case kInt:
		return s.count
	case kID:
		return s.id
	case kTime:
		return s.date
	case kDate:
		return s.day
	}
	return 0
}

// styleFor picks the cell style of a free-typed value (summary, regulator).
func (s *styles) styleFor(v any) int {
	switch v.(type) {
	case int64:
		return s.countLeft
	case time.Time:
		return s.dateLeft
	}
	return s.wrap
}

// writeWorkbook writes report.xlsx to path. Small sheets are set cell by
// cell; the evidence and ledger tables are streamed from their queries.
func writeWorkbook(ctx context.Context, db *sql.DB, d *caseData, path string, streamed []table) error {
	f := excelize.NewFile()
	defer f.Close()
	// klauspost's deflate is about twice as fast as the standard library's
	// on the big streamed sheets, for a similar size.
	f.SetZipWriter(func(w io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(w)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return kflate.NewWriter(out, 5)
		})
		return zw
	})
	st, err := newStyles(f)
	if err != nil {
		return fmt.Errorf("workbook styles: %w", err)
	}
	// Fixed document times make two runs with the same as_of identical.
	stamp := d.asOf.UTC().Format(time.RFC3339)
	if err := f.SetDocProps(&excelize.DocProperties{Creator: "leakmap", LastModifiedBy: "leakmap",
		Title: reportCatalog().MustT("report.page.title", "id", d.inc.ID), Created: stamp, Modified: stamp, Language: reportLang}); err != nil {
		return fmt.Errorf("workbook properties: %w", err)
	}
	if err := f.SetSheetName("Sheet1", "Summary"); err != nil {
		return err
	}
	if err := writeSummarySheet(f, st, d); err != nil {
		return fmt.Errorf("summary sheet: %w", err)
	}
	if err := writeRegulatorSheet(f, st, d); err != nil {
		return fmt.Errorf("regulator sheet: %w", err)
	}
	if err := writeTimelineSheet(f, st, d); err != nil {
		return fmt.Errorf("timeline sheet: %w", err)
	}
	if err := writePerDaySheet(f, st, d); err != nil {
		return fmt.Errorf("per day sheet: %w", err)
	}
	// Before the streamed sheets: SetActiveSheet reads every sheet back,
	// which for a streamed sheet means parsing all of it into memory.
	f.SetActiveSheet(0)
	var tables []*streamedTable
	defer func() { removeParts(tables) }()
	for _, t := range streamed {
		tb, err := layoutTable(ctx, f, st, db, t)
		if err != nil {
			return fmt.Errorf("%s sheet: %w", t.sheet, err)
		}
		tables = append(tables, tb)
	}
	tmp := path + ".tmp"
	defer os.Remove(tmp)
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteTo(out); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	zr, err := zip.OpenReader(tmp)
	if err != nil {
		return err
	}
	defer zr.Close()
	if err := findParts(&zr.Reader, tables); err != nil {
		return err
	}
	if err := fillTables(ctx, db, st, tables, filepath.Dir(path)); err != nil {
		return err
	}
	return sortZip(&zr.Reader, path, d.asOf, partsByEntry(tables), func(name string, data []byte) []byte {
		if name == "xl/charts/chart1.xml" {
			return chartCache(data, d.days)
		}
		return data
	})
}

// setRow writes a row of values starting at column 1 of row, with a style per cell.
func setRow(f *excelize.File, sheet string, row int, vals []any, style func(i int, v any) int) error {
	for i, v := range vals {
		cell, _ := excelize.CoordinatesToCellName(i+1, row)
		if v == nil {
			continue
		}
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			return err
		}
		if s := style(i, v); s != 0 {
			if err := f.SetCellStyle(sheet, cell, cell, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// header writes a frozen, filtered header row and the column widths.
func header(f *excelize.File, st *styles, sheet string, names []string, widths []float64, lastRow int) error {
	vals := make([]any, len(names))
	for i, n := range names {
		vals[i] = n
	}
	if err := setRow(f, sheet, 1, vals, func(int, any) int { return st.header }); err != nil {
		return err
	}
	for i, w := range widths {
		col, _ := excelize.ColumnNumberToName(i + 1)
		if err := f.SetColWidth(sheet, col, col, w); err != nil {
			return err
		}
	}
	if err := f.SetPanes(sheet, frozenHeader()); err != nil {
		return err
	}
	last, _ := excelize.CoordinatesToCellName(len(names), max(lastRow, 2))
	if err := f.AutoFilter(sheet, "A1:"+last, nil); err != nil {
		return err
	}
	// After the filter, which replaces the sheet properties.
	return printSetup(f, sheet, widths...)
}

// readableWidth is about what a landscape A4 page shows at a readable
// scale, in column-width characters.
const readableWidth = 170

// printSetup makes a sheet print landscape on A4, as many pages wide as its
// columns need to stay readable (one for most), with the header row
// repeated on every page.
func printSetup(f *excelize.File, sheet string, widths ...float64) error {
	total := 0.0
	for _, w := range widths {
		total += w
	}
	landscape, a4, one, any := "landscape", 9, max(1, int((total+readableWidth-1)/readableWidth)), 0
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Size: &a4, Orientation: &landscape, FitToWidth: &one, FitToHeight: &any}); err != nil {
		return err
	}
	fit := true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", RefersTo: "'" + sheet + "'!$1:$1", Scope: sheet})
}

func frozenHeader() *excelize.Panes {
	return &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}
}

func writeSummarySheet(f *excelize.File, st *styles, d *caseData) error {
	const sh = "Summary"
	items := summaryItems(d)
	widths := []float64{12, 52, 40}
	if err := header(f, st, sh, []string{"group", "figure", "value"}, widths, len(items)+1); err != nil {
		return err
	}
	for i, it := range items {
		vals := []any{it.Group, it.Label, it.Value}
		if err := setRow(f, sh, i+2, vals, func(_ int, v any) int { return st.styleFor(v) }); err != nil {
			return err
		}
		// Long values wrap in their cell rather than run under the chart.
		if n := wrappedLines(vals, widths); n > 1 {
			if err := f.SetRowHeight(sh, i+2, 15*float64(n)); err != nil {
				return err
			}
		}
	}
	if len(d.days) == 0 {
		return nil
	}
	n := len(d.days) + 1
	noVary := false
	series := []excelize.ChartSeries{{
		Name:       "'Per day'!$B$1",
		Categories: fmt.Sprintf("'Per day'!$A$2:$A$%d", n),
		Values:     fmt.Sprintf("'Per day'!$B$2:$B$%d", n),
		Fill:       excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"B3261E"}},
	}}
	legend := excelize.ChartLegend{Position: "none"}
	if sweptCase(d.days) {
		// The sweep's leaking responses beside the affected requests, from
		// the same Per day rows (report_daily.sql) as the page's dots.
		series = append(series, excelize.ChartSeries{
			Name:       "'Per day'!$E$1",
			Categories: fmt.Sprintf("'Per day'!$A$2:$A$%d", n),
			Values:     fmt.Sprintf("'Per day'!$E$2:$E$%d", n),
			Fill:       excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"1D4E89"}},
		})
		legend = excelize.ChartLegend{Position: "top"}
	}
	// Below the table, so no viewer or printout draws it over the figures.
	anchor, _ := excelize.CoordinatesToCellName(1, len(items)+4)
	return f.AddChart(sh, anchor, &excelize.Chart{
		Type:       excelize.Col,
		Series:     series,
		Title:      excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: reportCatalog().MustT("report.daily_chart_title")}}},
		Legend:     legend,
		VaryColors: &noVary,
		XAxis:      excelize.ChartAxis{NumFmt: excelize.ChartNumFmt{CustomNumFmt: "mm-dd"}, Font: excelize.Font{Color: "333333", Size: 9}},
		YAxis:      excelize.ChartAxis{MajorGridLines: true, Font: excelize.Font{Color: "333333", Size: 9}},
		Dimension:  excelize.ChartDimension{Width: 720, Height: 360},
	})
}

// chartCache fills the Summary chart's cached values from the Per day rows:
// excelize writes only the cell references, and a viewer that does not
// recalculate (a previewer, a mail client) then draws no bars. Series in
// order: affected requests, then the sweep's leaking responses when swept.
func chartCache(xml []byte, days []DayRow) []byte {
	var cat strings.Builder
	fmt.Fprintf(&cat, `<strCache><ptCount val="%d"></ptCount>`, len(days))
	for i, x := range days {
		fmt.Fprintf(&cat, `<pt idx="%d"><v>%s</v></pt>`, i, x.Day.Format("01-02"))
	}
	cat.WriteString(`</strCache></strRef></cat>`)
	values := func(v func(DayRow) int64) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<numCache><formatCode>General</formatCode><ptCount val="%d"></ptCount>`, len(days))
		for i, x := range days {
			fmt.Fprintf(&b, `<pt idx="%d"><v>%d</v></pt>`, i, v(x))
		}
		b.WriteString(`</numCache>`)
		return b.String()
	}
	vals := []string{values(func(x DayRow) int64 { return x.AffectedRequests })}
	if sweptCase(days) {
		vals = append(vals, values(func(x DayRow) int64 { return x.SweepLeaking }))
	}
	s := string(xml)
	for from := 0; ; {
		i := strings.Index(s[from:], "<cat><strRef><f>")
		if i < 0 {
			break
		}
		i += from
		j := strings.Index(s[i:], "</f></strRef></cat>")
		if j < 0 {
			break
		}
		end := i + j + len("</f></strRef></cat>")
		s = s[:end-len("</strRef></cat>")] + cat.String() + s[end:]
		from = end - len("</strRef></cat>") + cat.Len()
	}
	for _, v := range vals {
		s = strings.Replace(s, "<numCache><formatCode></formatCode></numCache>", v, 1)
	}
	return []byte(s)
}

func writeRegulatorSheet(f *excelize.File, st *styles, d *caseData) error {
	const sh = "Regulator"
	if _, err := f.NewSheet(sh); err != nil {
		return err
	}
	cols := catalog.Get(filing.Language(d.inc)).List("sheet.columns")
	if err := header(f, st, sh, cols, []float64{15, 48, 90, 14}, len(d.reg)+1); err != nil {
		return err
	}
	widths := []float64{15, 48, 90, 14}
	for i, r := range d.reg {
		vals := []any{r.Section, r.Item, r.Value, r.Basis}
		if err := setRow(f, sh, i+2, vals, func(col int, v any) int {
			if col == 2 {
				return st.styleFor(v)
			}
			return st.wrap
		}); err != nil {
			return err
		}
		// Spreadsheets do not grow rows for wrapped text on open: size them.
		if err := f.SetRowHeight(sh, i+2, 15*float64(wrappedLines(vals, widths))); err != nil {
			return err
		}
	}
	return nil
}

func writeTimelineSheet(f *excelize.File, st *styles, d *caseData) error {
	const sh = "Timeline"
	if _, err := f.NewSheet(sh); err != nil {
		return err
	}
	if err := header(f, st, sh, []string{"event", "time_utc", "source"}, []float64{44, 20, 18}, len(d.timeline)+1); err != nil {
		return err
	}
	for i, e := range d.timeline {
		if err := setRow(f, sh, i+2, []any{e.Event, e.TS, e.Source}, func(col int, _ any) int {
			if col == 1 {
				return st.date
			}
			return 0
		}); err != nil {
			return err
		}
	}
	return nil
}

// sweptCase reports whether the case was swept (the per-day rows carry
// the sweep's leaking responses).
func sweptCase(days []DayRow) bool {
	return len(days) > 0 && days[0].SweepRan
}

func writePerDaySheet(f *excelize.File, st *styles, d *caseData) error {
	const sh = "Per day"
	if _, err := f.NewSheet(sh); err != nil {
		return err
	}
	cols := []string{"day_utc", "affected_requests", "recipient_tenants", "cross_exposures"}
	widths := []float64{12, 18, 18, 16}
	swept := sweptCase(d.days)
	if swept {
		// Beside the threshold's picture, the sweep's: leaks whatever their cause.
		cols, widths = append(cols, "sweep_leaking_responses"), append(widths, 24)
	}
	if err := header(f, st, sh, cols, widths, len(d.days)+1); err != nil {
		return err
	}
	for i, x := range d.days {
		row := []any{x.Day, x.AffectedRequests, x.RecipientTenants, x.CrossExposures}
		if swept {
			row = append(row, x.SweepLeaking)
		}
		if err := setRow(f, sh, i+2, row, func(col int, _ any) int {
			if col == 0 {
				return st.day
			}
			return st.count
		}); err != nil {
			return err
		}
	}
	return nil
}

// sortZip copies the workbook's zip entries, still compressed, in a fixed
// order and dated stamp: excelize writes streamed sheets in map order,
// which differs from run to run, and leaves entry dates at zero. The
// streamed sheets' entries are replaced by their parts, which hold the rows.
func sortZip(r *zip.Reader, to string, stamp time.Time, parts map[string]*streamedPart, rewrite func(name string, data []byte) []byte) error {
	files := append([]*zip.File(nil), r.File...)
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i].Name, files[j].Name
		if (a == "[Content_Types].xml") != (b == "[Content_Types].xml") {
			return a == "[Content_Types].xml"
		}
		return a < b
	})
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	w := zip.NewWriter(out)
	for _, zf := range files {
		var err error
		if p := parts[zf.Name]; p != nil {
			fh := zf.FileHeader
			fh.Modified = stamp.UTC()
			err = p.writeRaw(w, fh)
		} else {
			err = copyEntry(w, zf, stamp, rewrite)
		}
		if err != nil {
			out.Close()
			return fmt.Errorf("write %s: %w", to, err)
		}
	}
	if err := w.Close(); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", to, err)
	}
	return out.Close()
}

func copyEntry(w *zip.Writer, zf *zip.File, stamp time.Time, rewrite func(string, []byte) []byte) error {
	if zf.Name == "[Content_Types].xml" {
		return rewriteContentTypes(w, zf, stamp)
	}
	if strings.HasPrefix(zf.Name, "xl/charts/") {
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		dst, err := w.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zip.Deflate, Modified: stamp.UTC()})
		if err != nil {
			return err
		}
		_, err = dst.Write(rewrite(zf.Name, data))
		return err
	}
	fh := zf.FileHeader
	fh.Modified = stamp.UTC()
	fh.Extra = nil // drop any extended timestamp: Modified alone dates the entry
	raw, err := zf.OpenRaw()
	if err != nil {
		return err
	}
	dst, err := w.CreateRaw(&fh)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, raw)
	return err
}

// defaultRE matches one <Default> element of [Content_Types].xml.
var defaultRE = regexp.MustCompile(`<Default [^>]*>(</Default>)?`)

// rewriteContentTypes writes [Content_Types].xml with its <Default>
// elements sorted: excelize adds the image extensions from a map, in an
// order that changes from run to run.
func rewriteContentTypes(w *zip.Writer, zf *zip.File, stamp time.Time) error {
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	loc := defaultRE.FindAllIndex(data, -1)
	if len(loc) > 1 {
		// Only a contiguous run of <Default> elements is reordered.
		contiguous := true
		for i := 1; i < len(loc); i++ {
			contiguous = contiguous && loc[i][0] == loc[i-1][1]
		}
		if contiguous {
			elems := make([]string, len(loc))
			for i, l := range loc {
				elems[i] = string(data[l[0]:l[1]])
			}
			sort.Strings(elems)
			var b bytes.Buffer
			b.Write(data[:loc[0][0]])
			b.WriteString(strings.Join(elems, ""))
			b.Write(data[loc[len(loc)-1][1]:])
			data = b.Bytes()
		}
	}
	dst, err := w.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zip.Deflate, Modified: stamp.UTC()})
	if err != nil {
		return err
	}
	_, err = dst.Write(data)
	return err
}

// wrappedLines estimates the lines a row of wrapped text cells takes, from
// the column widths (in characters).
func wrappedLines(vals []any, widths []float64) int {
	lines := 1
	for i, v := range vals {
		text, ok := v.(string)
		if !ok || i >= len(widths) {
			continue
		}
		perLine := max(int(widths[i]*0.95), 1)
		n := 0
		for _, para := range strings.Split(text, "\n") {
			n += max(1, (len([]rune(para))+perLine-1)/perLine)
		}
		lines = max(lines, n)
	}
	return lines
}
