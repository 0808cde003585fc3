// Package sheetcsv writes CSV meant to be opened by people in a
// spreadsheet (tenants.csv, exposures.csv, affected_requests.csv, the
// outbox index, the notices' attachments). A spreadsheet runs a cell that
// starts with = + - @ (or a tab or CR before one) as a formula: a tenant id
// or model such as =HYPERLINK("http://evil.test","r") would become a live
// link in a responder's or a customer's sheet. As OWASP's "CSV Injection"
// advises, such a text cell is written with a leading single quote, which
// spreadsheets show as text.
//
// Only text is neutralised: a number leakmap writes itself (a count, a
// token size) is never a formula, so a negative number stays a number.
// Files that leakmap or other programs read back (capacity.csv,
// findings.csv) use encoding/csv directly and keep values exact, as do the
// case database and the Parquet and Arrow exports.
package sheetcsv

import (
	"encoding/csv"
	"io"
)

// Cell returns s as a spreadsheet shows it as text: with a leading ' when
// it starts with a character that opens a formula.
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// Writer is a csv.Writer whose text cells are neutralised.
type Writer struct {
	w   *csv.Writer
	rec []string
}

// NewWriter writes CSV to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record whose every cell is text.
func (w *Writer) Write(record []string) error {
	w.rec = w.rec[:0]
	for _, c := range record {
		w.rec = append(w.rec, Cell(c))
	}
	return w.w.Write(w.rec)
}

// WriteMixed writes one record where text[i] says whether cell i is text
// (neutralised) or a value leakmap formatted itself (a number, a time, a
// boolean: written as is).
func (w *Writer) WriteMixed(record []string, text []bool) error {
	w.rec = w.rec[:0]
	for i, c := range record {
		if text[i] {
			c = Cell(c)
		}
		w.rec = append(w.rec, c)
	}
	return w.w.Write(w.rec)
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports any error of a previous Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
