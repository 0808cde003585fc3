package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/leakmap/leakmap/errs"
)

// rowAtSink is a sink whose records need not be numbered by line.
type rowAtSink interface {
	sink
	rowAt(id, line int64, v values) error
}

// maxRawDocument bounds the raw text kept for a document that does not parse.
const maxRawDocument = 1 << 20

// readDocuments reads a layout whose records sit inside JSON documents
// (m.records: Cloudflare's API pages, OTLP's resourceSpans): one document
// a line, or one whole (pretty-printed or concatenated) document a file;
// a document without the records' path is a record itself (one row a
// line). Records are numbered in file order (their ids; a page on one
// line holds many); their line is the line their own object starts on in
// a document spread over lines, else the line of their document.
//
// A line over max is rejected; a whole document is read only up to max.
func readDocuments(ctx context.Context, r io.Reader, max int, m *Mapping, inst fileInstance, s sink) error {
	rs, ok := s.(rowAtSink)
	if !ok {
		return errors.New("ingest: nested records need a records sink")
	}
	lr := newLineReader(r, max)
	var long longLines
	var seen bytes.Buffer // lines read before the first non-blank one
	for {
		b, line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if le := (*longLineError)(nil); errors.As(err, &le) {
			long.add(le)
			return readDocumentLines(ctx, b, line, lr, &long, m, inst, rs)
		}
		if err != nil {
			return err
		}
		b = trimBOM(b, line)
		seen.Write(b)
		seen.WriteByte('\n')
		if isBlank(b) {
			continue
		}
		if json.Valid(b) {
			return readDocumentLines(ctx, b, line, lr, &long, m, inst, rs)
		}
		rest, err := io.ReadAll(io.LimitReader(lr.r, int64(lr.max)+1))
		if err != nil {
			return err
		}
		if seen.Len()+len(rest) > lr.max {
			return errs.Input("a JSON document of more than --max-line-bytes %d bytes: not read", lr.max)
		}
		return readWholeDocuments(ctx, append(seen.Bytes(), rest...), m, inst, rs)
	}
}

// docRecord is one record found in a document.
type docRecord struct {
	rec map[string]any
	raw string
}

type docOutcome struct {
	outs []outcome
}

// judgeDocument expands one document into its records' outcomes, each at
// the line its own object starts on (a pretty-printed page: errors and
// custody point at the record; on a one-line document, that line).
func judgeDocument(doc any, raw []byte, line int64, m *Mapping, inst fileInstance) []outcome {
	recs, err := documentRecords(doc, raw, m.records)
	if err != nil {
		return []outcome{{line: line, reason: err.Error(), raw: rawText(raw)}}
	}
	lines := recordLines(raw, line, m.records, len(recs))
	outs := make([]outcome, len(recs))
	for i, d := range recs {
		v, err := canonicalRow(d.rec, m, inst)
		if err != nil {
			outs[i] = outcome{line: lines[i], reason: err.Error(), raw: d.raw}
			continue
		}
		outs[i] = outcome{line: lines[i], v: v, ok: true}
	}
	return outs
}

// recordLines is the line of each of a document's n records: where its
// object starts, when the document spans lines and its records can be
// placed (recordOffsets), else the document's first line.
func recordLines(raw []byte, line int64, p path, n int) []int64 {
	lines := make([]int64, n)
	for i := range lines {
		lines[i] = line
	}
	if n == 0 || bytes.IndexByte(raw, '\n') < 0 {
		return lines
	}
	offs, ok := recordOffsets(raw, p)
	if !ok || len(offs) != n {
		return lines
	}
	at, prev := line, int64(0)
	for i, off := range offs {
		if off < prev {
			return lines // not in document order: keep the document's line
		}
		at += int64(bytes.Count(raw[prev:off], []byte("\n")))
		prev = off
		lines[i] = at
	}
	return lines
}

func readDocumentLines(ctx context.Context, first []byte, firstLine int64, lr *lineReader, long *longLines, m *Mapping, inst fileInstance, s rowAtSink) error {
	produce := func(yield func([]byte, int64) error) error {
		if err := yield(first, firstLine); err != nil {
			return err
		}
		return nonBlankLinesFrom(ctx, lr, false, long, yield)
	}
	work := func(b []byte, line int64) docOutcome {
		if why := long.reason(line); why != "" {
			return docOutcome{outs: []outcome{{line: line, reason: why, raw: rawText(b)}}}
		}
		obj, err := parseJSONObject(b)
		if err != nil {
			return docOutcome{outs: []outcome{{line: line, reason: err.Error(), raw: rawText(b)}}}
		}
		return docOutcome{outs: judgeDocument(obj, b, line, m, inst)}
	}
	var id int64
	return parallelMap(ctx, produce, work, func(d docOutcome) error {
		return emitOutcomes(d.outs, &id, s)
	})
}

func emitOutcomes(outs []outcome, id *int64, s rowAtSink) error {
	for _, o := range outs {
		if !o.ok {
			if err := s.reject(o.line, o.reason, o.raw); err != nil {
				return err
			}
			continue
		}
		*id++
		if err := s.rowAt(*id, o.line, o.v); err != nil {
			return err
		}
	}
	return nil
}

// nonBlankLinesFrom yields the rest of lr's non-blank lines (nonBlankLines,
// bom included, from wherever lr is); one over the limit is yielded (its
// first bytes) and recorded in long.
func nonBlankLinesFrom(ctx context.Context, lr *lineReader, bom bool, long *longLines, yield func([]byte, int64) error) error {
	for {
		b, line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if le := (*longLineError)(nil); errors.As(err, &le) {
			long.add(le)
			if err := yield(b, line); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if bom {
			b = trimBOM(b, line)
		}
		if isBlank(b) {
			continue
		}
		if err := yield(b, line); err != nil {
			return err
		}
	}
}

// readWholeDocuments reads a file of one or more JSON documents spread over
// lines (an API page as curl saved it, pretty-printed or not).
func readWholeDocuments(ctx context.Context, data []byte, m *Mapping, inst fileInstance, s rowAtSink) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	lineAt := func(off int64) int64 {
		for off < int64(len(data)) && (data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t') {
			off++
		}
		return int64(bytes.Count(data[:off], []byte("\n"))) + 1
	}
	var id int64
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		off := dec.InputOffset()
		line := lineAt(off)
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			rest := data[off:]
			if len(rest) > maxRawDocument {
				rest = rest[:maxRawDocument]
			}
			reason := "not JSON: " + err.Error()
			if errors.Is(err, io.ErrUnexpectedEOF) {
				reason = truncatedDocument // damaged (torn.go)
			}
			return s.reject(line, reason, rawText(bytes.TrimSpace(rest)))
		}
		raw := bytes.TrimSpace(data[off:dec.InputOffset()])
		if err := emitOutcomes(judgeDocument(doc, raw, line, m, inst), &id, s); err != nil {
			return err
		}
	}
}

// documentRecords finds the records at p in doc. A document that lacks
// p's first key is a record itself.
func documentRecords(doc any, raw []byte, p path) ([]docRecord, error) {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if p[0].kind == stepField {
		if _, has := obj[p[0].name]; !has {
			return []docRecord{{rec: obj, raw: rawText(raw)}}, nil
		}
	}
	var out []docRecord
	var expand func(cur any, holder map[string]any, p path)
	expand = func(cur any, holder map[string]any, p path) {
		if len(p) == 0 {
			rec, ok := cur.(map[string]any)
			if !ok {
				b, _ := json.Marshal(cur)
				out = append(out, docRecord{rec: map[string]any{}, raw: string(b)})
				return
			}
			b, _ := json.Marshal(rec)
			if holder != nil {
				rec["$up"] = holder
			}
			out = append(out, docRecord{rec: rec, raw: string(b)})
			return
		}
		switch st := p[0]; st.kind {
		case stepField:
			o, ok := jsonIn(cur).(map[string]any)
			if !ok {
				return
			}
			if _, set := o["$up"]; holder != nil && !set {
				o["$up"] = holder
			}
			if v, ok := o[st.name]; ok && v != nil {
				expand(v, o, p[1:])
			}
		case stepAll:
			arr, ok := jsonIn(cur).([]any)
			if !ok {
				return
			}
			for _, e := range arr {
				expand(e, holder, p[1:])
			}
		case stepIndex:
			if arr, ok := jsonIn(cur).([]any); ok && st.i < len(arr) {
				expand(arr[st.i], holder, p[1:])
			}
		case stepKey:
			if v, ok := walk(cur, p[:1]); ok {
				expand(v, holder, p[1:])
			}
		}
	}
	expand(obj, nil, p)
	return out, nil
}

// describeDocument names what a JSON document looks like, for refusals.
func describeDocument(head []byte) string {
	s := string(head)
	switch {
	case strings.Contains(s, `"resourceSpans"`):
		return `OTLP spans {"resourceSpans": [...]} (read by --preset otlp-genai)`
	case strings.Contains(s, `"result"`):
		return `an API page {"result": [...]} (a Cloudflare AI Gateway page is read by --preset cloudflare-aigw)`
	}
	return fmt.Sprintf("one JSON document over %d+ lines", bytes.Count(head, []byte("\n")))
}
