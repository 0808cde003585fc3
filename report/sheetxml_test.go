package report

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/xuri/excelize/v2"
)

// TestSheetXMLMatchesExcelize: the rows our writer puts in a streamed
// sheet are the XML excelize's StreamWriter writes for the same values and
// styles, byte for byte, on values chosen to hit every escaping rule.
func TestSheetXMLMatchesExcelize(t *testing.T) {
	texts := []string{
		"req-000001", "", "a&b<c>d\"e'f", "tab\tin", " lead", "trail ", "\nnl first", "line\nbreak", "cr\rhere",
		"ctrl\x01\x1f", "bad utf8 \xff\xfe", "é ü 漢字 🙂", "_x0041_", "_x005F_", "_x005F_x0041_", "_x005F_xD800_",
		"_xD800_ surrogate", "a_x12G4_b", "_x00", "x_x0041_y_x0042_", "shingles=12 run=16 rare=12 slots=1840 instance=dc-0",
		"=HYPERLINK(\"http://evil.test\",\"r\")", strings.Repeat("long ", 7000), strings.Repeat("🙂", 17000),
		"]]>", "\u2028sep", "\ufffd", "\x7f del", "snake_case_id", "ends_x", "_", "x_", "__x0041_",
	}
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	times := []time.Time{time.Date(2026, 9, 1, 12, 34, 56, 789000000, time.UTC), time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC),
		time.Date(1900, 2, 28, 23, 59, 59, 0, time.UTC), time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 1000, time.UTC)}
	var vals [][]any
	for i, s := range texts {
		row := make([]any, 6)
		sb := bld.Field(0).(*array.StringBuilder)
		nb := bld.Field(1).(*array.Int64Builder)
		ib := bld.Field(2).(*array.Int64Builder)
		bb := bld.Field(3).(*array.BooleanBuilder)
		tb := bld.Field(4).(*array.TimestampBuilder)
		i3 := bld.Field(5).(*array.Int32Builder)
		sb.Append(s)
		row[0] = s
		if i%7 == 3 {
			nb.AppendNull()
			bb.AppendNull()
			tb.AppendNull()
			i3.AppendNull()
		} else {
			n := int64(i*1234567) - 5
			nb.Append(n)
			bb.Append(i%2 == 0)
			tm := times[i%len(times)]
			ts, _ := arrow.TimestampFromTime(tm, arrow.Microsecond)
			tb.Append(ts)
			i3.Append(int32(i))
			row[1], row[3], row[4], row[5] = n, i%2 == 0, tm, int64(i)
		}
		ib.Append(int64(i))
		row[2] = int64(i)
		vals = append(vals, row)
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	cols := []column{{"s", kText, 10}, {"n", kInt, 10}, {"id", kID, 10}, {"b", kBool, 10}, {"ts", kTime, 10}, {"i32", kInt, 10}}

	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	rf := newRowFormatter(cols, st)
	if err := rf.bind(rec); err != nil {
		t.Fatal(err)
	}
	var ours []byte
	for r := range vals {
		ours = rf.row(ours, r+2, r)
	}

	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	for r, row := range vals {
		cells := make([]any, len(row))
		for i, v := range row {
			if s := st.forKind(cols[i].kind); s != 0 && v != nil {
				cells[i] = excelize.Cell{StyleID: s, Value: v}
			} else {
				cells[i] = v
			}
		}
		cell, _ := excelize.CoordinatesToCellName(1, r+2)
		if err := sw.SetRow(cell, cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sheet string
	for _, zf := range zr.File {
		if zf.Name == "xl/worksheets/sheet1.xml" {
			sheet = readZipPart(t, zf)
		}
	}
	i, j := strings.Index(sheet, "<sheetData>"), strings.Index(sheet, "</sheetData>")
	if i < 0 || j < 0 {
		t.Fatalf("no sheetData in excelize's sheet: %.300s", sheet)
	}
	theirs := sheet[i+len("<sheetData>") : j]
	if string(ours) != theirs {
		a, b := string(ours), theirs
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		t.Fatalf("rows differ from excelize's at byte %d:\n ours   %.200q\n theirs %.200q", k, a[max(0, k-80):], b[max(0, k-80):])
	}
}

func TestColumnLetters(t *testing.T) {
	for n, want := range map[int]string{1: "A", 26: "Z", 27: "AA", 52: "AZ", 53: "BA", 702: "ZZ", 703: "AAA"} {
		if got := columnLetters(n); got != want {
			t.Errorf("columnLetters(%d) = %q, want %q", n, got, want)
		}
		if name, _ := excelize.ColumnNumberToName(n); name != want {
			t.Errorf("excelize names column %d %q", n, name)
		}
	}
}
