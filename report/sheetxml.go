package report

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The streamed sheets' rows are written as worksheet XML by this file
// rather than through excelize's StreamWriter, whose per-cell work
// (interface values, cell names, reflection-free but allocating
// marshalling) was most of the report's time on a big case. The XML is the
// one the StreamWriter writes for the same values, byte for byte
// (TestSheetXMLMatchesExcelize), so the workbook reads back the same.

// cellFunc appends row r of a column as one <c> element at ref.
type cellFunc func(buf []byte, ref []byte, r int) []byte

// rowFormatter appends the <row> elements of a record batch.
type rowFormatter struct {
	cols    []column
	styles  []int    // cell style per column (0: none)
	letters [][]byte // column letters, A, B, ...
	cells   []cellFunc
	ref     []byte
	num     []byte // the row number's digits
}

func newRowFormatter(cols []column, st *styles) *rowFormatter {
	f := &rowFormatter{cols: cols, styles: make([]int, len(cols)), letters: make([][]byte, len(cols))}
	for i, c := range cols {
		f.styles[i] = st.forKind(c.kind)
		f.letters[i] = []byte(columnLetters(i + 1))
	}
	return f
}

func columnLetters(n int) string {
	var b []byte
	for n > 0 {
		n--
		b = append([]byte{byte('A' + n%26)}, b...)
		n /= 26
	}
	return string(b)
}

// bind prepares the per-column cell writers of a batch.
func (f *rowFormatter) bind(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(f.cols) {
		return fmt.Errorf("query gives %d columns, the sheet has %d", rec.NumCols(), len(f.cols))
	}
	f.cells = f.cells[:0]
	for i, c := range f.cols {
		fn, err := cellWriter(rec.Column(i), f.styles[i])
		if err != nil {
			return fmt.Errorf("column %s: %w", c.name, err)
		}
		f.cells = append(f.cells, fn)
	}
	return nil
}

// row appends row r of the bound batch as sheet row n.
func (f *rowFormatter) row(buf []byte, n, r int) []byte {
	buf = append(buf, `<row r="`...)
	digits := len(buf)
	buf = strconv.AppendInt(buf, int64(n), 10)
	// Each cell's reference is its column's letters and the row number,
	// formatted once a row.
	f.num = append(f.num[:0], buf[digits:]...)
	buf = append(buf, `">`...)
	for i, cell := range f.cells {
		f.ref = append(append(f.ref[:0], f.letters[i]...), f.num...)
		buf = cell(buf, f.ref, r)
	}
	return append(buf, `</row>`...)
}

// open appends `<c r="REF"` with the style and type attributes.
func openCell(buf, ref []byte, style int, typ string) []byte {
	buf = append(buf, `<c r="`...)
	buf = append(buf, ref...)
	buf = append(buf, '"')
	if style != 0 {
		buf = append(buf, ` s="`...)
		buf = strconv.AppendInt(buf, int64(style), 10)
		buf = append(buf, '"')
	}
	if typ != "" {
		buf = append(buf, ` t="`...)
		buf = append(buf, typ...)
		buf = append(buf, '"')
	}
	return append(buf, '>')
}

func numberCell(buf, ref []byte, style int, v []byte) []byte {
	buf = openCell(buf, ref, style, "")
	buf = append(buf, `<v>`...)
	buf = append(buf, v...)
	return append(buf, `</v></c>`...)
}

// stringCell writes an inline string cell as excelize's setInlineStr does:
// cut at Excel's 32,767 characters, XML-escaped (new lines kept), its
// _xHHHH_ sequences escaped, xml:space="preserve" when it starts or ends
// with white space.
func stringCell(buf, ref []byte, style int, s string) []byte {
	buf = openCell(buf, ref, style, "inlineStr")
	if len(s) > 32767 && countUTF16(s) > 32767 {
		s = truncateUTF16(s, 32767)
	}
	buf = append(buf, `<is><t`...)
	if s != "" {
		switch s[0] {
		case 9, 10, 13, 32:
			buf = append(buf, ` xml:space="preserve"`...)
		default:
			switch s[len(s)-1] {
			case 9, 10, 13, 32:
				buf = append(buf, ` xml:space="preserve"`...)
			}
		}
	}
	buf = append(buf, '>')
	if plainXML(s) {
		buf = append(buf, s...)
	} else {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		buf = append(buf, bstrEscape(strings.ReplaceAll(b.String(), "&#xA;", "\n"))...)
	}
	return append(buf, `</t></is></c>`...)
}

// plainXML reports whether s needs no escaping at all: printable ASCII
// without markup characters and without an _x that could start _xHHHH_.
func plainXML(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !plainByte[c] && (c != '_' || i+1 < len(s) && s[i+1] == 'x') {
			return false
		}
	}
	return true
}

// plainByte: the bytes plainXML passes without a second look ('_' is
// looked at with the next byte).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune("&<>\"'_", rune(c))
	}
	return t
}()

// bstrEscape escapes the text's _xHHHH_ sequences, which a reader would
// otherwise decode as characters, the way excelize's writer does (a
// sequence naming a UTF-16 surrogate is dropped there, and here).
func bstrEscape(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var out strings.Builder
	cursor := 0
	for i := 0; i+7 <= len(s); {
		if !isBstr(s[i:]) {
			i++
			continue
		}
		out.WriteString(s[cursor:i])
		sub, end := s[i:i+7], i+7
		cursor = end
		if sub == "_x005F_" {
			if end+6 <= len(s) && s[end] == 'x' && isHex4(s[end+1:end+5]) && s[end+5] == '_' && validHex(s[end+1:end+5]) {
				out.WriteString(sub + "x005F" + sub)
			} else {
				out.WriteString(sub + "x005F_")
			}
		} else if validHex(s[i+2 : i+6]) {
			out.WriteString("_x005F" + sub)
		}
		i = end
	}
	out.WriteString(s[cursor:])
	return out.String()
}

// validHex: four hex digits that name a character (not a surrogate half).
func validHex(h string) bool {
	v, _ := strconv.ParseUint(h, 16, 32)
	return utf8.ValidRune(rune(v))
}

func isBstr(s string) bool {
	return len(s) >= 7 && s[0] == '_' && s[1] == 'x' && isHex4(s[2:6]) && s[6] == '_'
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func countUTF16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func truncateUTF16(s string, max int) string {
	n := 0
	for i, r := range s {
		if n += utf16.RuneLen(r); n > max {
			return s[:i]
		}
	}
	return s
}

// Excel's day count of a UTC time, as excelize's timeToExcelTime computes
// it (the 1900 date system, with Lotus's 29 February 1900).
var (
	excelEpoch      = time.Date(1899, time.December, 31, 0, 0, 0, 0, time.UTC)
	excelLeapBug    = time.Date(1900, time.March, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond)
	excelMaxSpan    = 290 * 364 * 24 * time.Hour
	excelDayNanosec = 24 * time.Hour
)

func excelTime(t time.Time) float64 {
	if t.Before(excelEpoch) {
		return 0
	}
	tt, diff, result := t, t.Sub(excelEpoch), 0.0
	for diff >= excelMaxSpan {
		result += float64(excelMaxSpan / excelDayNanosec)
		tt = tt.Add(-excelMaxSpan)
		diff = tt.Sub(excelEpoch)
	}
	rem := diff % excelDayNanosec
	result += float64(diff-rem)/float64(excelDayNanosec) + float64(rem)/float64(excelDayNanosec)
	if t.After(excelLeapBug) {
		result++
	}
	return result
}

func timeCell(buf, ref []byte, style int, t time.Time, scratch []byte) []byte {
	if x := excelTime(t); x > 0 {
		return numberCell(buf, ref, style, strconv.AppendFloat(scratch[:0], x, 'f', -1, 64))
	}
	// Before 1900: excelize writes the RFC 3339 text.
	return stringCell(buf, ref, style, t.Format(time.RFC3339Nano))
}

// cellWriter returns the writer of one column of a batch: NULLs are no
// cell at all, as the StreamWriter skips nil values.
func cellWriter(col arrow.Array, style int) (cellFunc, error) {
	null := func(fn cellFunc) cellFunc {
		if col.NullN() == 0 {
			return fn
		}
		return func(buf, ref []byte, r int) []byte {
			if col.IsNull(r) {
				return buf
			}
			return fn(buf, ref, r)
		}
	}
	var scratch [32]byte
	num := func(v int64, buf, ref []byte) []byte {
		return numberCell(buf, ref, style, strconv.AppendInt(scratch[:0], v, 10))
	}
	switch a := col.(type) {
	case *array.String:
		return null(func(buf, ref []byte, r int) []byte { return stringCell(buf, ref, style, a.Value(r)) }), nil
	case *array.LargeString:
		return null(func(buf, ref []byte, r int) []byte { return stringCell(buf, ref, style, a.Value(r)) }), nil
	case *array.StringView:
		return null(func(buf, ref []byte, r int) []byte { return stringCell(buf, ref, style, a.Value(r)) }), nil
	case *array.Int64:
		return null(func(buf, ref []byte, r int) []byte { return num(a.Value(r), buf, ref) }), nil
	case *array.Int32:
		return null(func(buf, ref []byte, r int) []byte { return num(int64(a.Value(r)), buf, ref) }), nil
	case *array.Uint64:
		return null(func(buf, ref []byte, r int) []byte { return num(int64(a.Value(r)), buf, ref) }), nil
	case *array.Boolean:
		return null(func(buf, ref []byte, r int) []byte {
			v := []byte("0")
			if a.Value(r) {
				v = []byte("1")
			}
			buf = openCell(buf, ref, style, "b")
			buf = append(buf, `<v>`...)
			buf = append(buf, v...)
			return append(buf, `</v></c>`...)
		}), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return null(func(buf, ref []byte, r int) []byte {
			return timeCell(buf, ref, style, a.Value(r).ToTime(unit).UTC(), scratch[:])
		}), nil
	case *array.Date32:
		return null(func(buf, ref []byte, r int) []byte {
			return timeCell(buf, ref, style, a.Value(r).ToTime().UTC(), scratch[:])
		}), nil
	}
	return nil, fmt.Errorf("column type %s not handled", col.DataType())
}
