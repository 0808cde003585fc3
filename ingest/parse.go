package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Indexes of canonical fields in a row's values.
const (
	fRequestID = iota
	fTS
	fEndTS
	fTenantID
	fModel
	fPromptTokens
	fCompletionTokens
	fStatus
	fPrefill
	fDecode
	fPromptText
	fResponseText
	nFields
)

// values holds one canonical row as driver values in canonicalFields order:
// string, time.Time (UTC, microseconds), int64, int32, or nil for NULL.
type values [nValues]any

// nValues holds a canonical row or a source record (recordFields).
const nValues = 16

// maxJSONDepth bounds the nesting of a record, on both paths: the fast
// path sends every line with that many brackets to this parser (see
// checkLines), so a line nested 200,000 deep is rejected on either, where
// DuckDB's reader loaded it and encoding/json refused it (at 10,000).
const maxJSONDepth = 1000

// parseJSONObject decodes one JSON Lines line into an object. Numbers stay
// json.Number so integers and epoch times keep every digit.
func parseJSONObject(line []byte) (map[string]any, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("not valid UTF-8")
	}
	if brackets(line) >= maxJSONDepth && jsonDepth(line) > maxJSONDepth {
		return nil, fmt.Errorf("not JSON: nested more than %d levels deep", maxJSONDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("not JSON: truncated")
		}
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not JSON: more than one value on the line")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if topLevelKeys(line) != len(obj) {
		// A key given twice: encoding/json keeps the last value, DuckDB's
		// reader the first. Keep the first, so a line loads the same on
		// either path and its duplicates are found.
		return firstKeyWins(line)
	}
	return obj, nil
}

// topLevelKeys counts the keys, repeats included, at the top level of a
// valid JSON object: one pass over the bytes, about a tenth of the decode.
func topLevelKeys(b []byte) int {
	n, depth := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			start := depth
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++ // the escaped byte
				}
			}
			if start != 1 {
				continue
			}
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < len(b) && b[j] == ':' {
				n++
			}
		}
	}
	return n
}

// firstKeyWins decodes a JSON object (already known to be valid), keeping the
// first value of a key given more than once.
func firstKeyWins(line []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	obj := map[string]any{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		k, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		if _, seen := obj[k]; !seen {
			obj[k] = v
		}
	}
	return obj, nil
}

// lookup walks a dotted path into nested objects; JSON null is absent.
// A CSV or Parquet column may itself be named with dots ("meta.account"):
// the whole name is tried first.
func lookup(rec map[string]any, p []string) (any, bool) {
	steps := make(path, len(p))
	for i, n := range p {
		steps[i] = step{kind: stepField, name: n}
	}
	return lookupPath(rec, steps)
}

// fileInstance is what a file name tells about the host that wrote it.
type fileInstance struct {
	prefill, decode string
	groups          map[string]any // the layout's file_name groups ($file.NAME)
}

// field finds field i of the mapping's target in rec: the first
// alternative that gives a value, else the constant.
func (m *Mapping) field(i int, rec map[string]any) (any, error) {
	f := m.fields[i]
	for _, a := range m.specs[i] {
		src, ok := lookupPath(rec, a.p)
		if !ok {
			continue
		}
		if a.table != nil {
			s, err := toString(one(src))
			if err != nil {
				continue
			}
			if src, ok = a.table[s]; !ok {
				continue
			}
		}
		v, err := m.convert(f, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if v != nil {
			return v, nil
		}
	}
	if c, ok := m.Constants[f]; ok {
		return m.convert(f, c)
	}
	return nil, nil
}

// one is a spread's only value (else the spread, which then fails to convert).
func one(v any) any {
	if s, ok := v.(spread); ok && len(s) == 1 {
		return s[0]
	}
	return v
}

// canonicalRow maps one record to a row of the mapping's target (requests,
// or source_records: see recordRow) and validates it. The error is the
// reason kept in rejected_rows: short, naming the field, never quoting
// logged values.
func canonicalRow(rec map[string]any, m *Mapping, inst fileInstance) (values, error) {
	if inst.groups != nil {
		rec["$file"] = inst.groups
	}
	if m.toRecords {
		return recordRow(rec, m)
	}
	var v values
	for i := range canonicalFields {
		val, err := m.field(i, rec)
		if err != nil {
			return v, err
		}
		v[i] = val
	}
	if v[fEndTS] == nil && m.durPath != nil && v[fTS] != nil {
		if d, ok := lookupPath(rec, m.durPath); ok {
			end, err := addDuration(v[fTS].(time.Time), d, m.DurationUnit)
			if err != nil {
				return v, fmt.Errorf("%s: %w", m.DurationField, err)
			}
			v[fEndTS] = end
		}
	}
	if m.InstanceFromFileName {
		if v[fPrefill] == nil && inst.prefill != "" {
			v[fPrefill] = inst.prefill
		}
		if v[fDecode] == nil && inst.decode != "" {
			v[fDecode] = inst.decode
		}
	}
	for _, f := range requiredFields {
		if v[fieldIndex(f)] == nil {
			return v, missingErr(m, f)
		}
	}
	return v, nil
}

// missingErr is the reason for a required field with no value.
func missingErr(m *Mapping, f string) error {
	if src := m.source(f); src != "" && src != f {
		return fmt.Errorf("%s: missing (field %q)", f, src)
	}
	return fmt.Errorf("%s: missing", f)
}

func fieldIndex(f string) int {
	for i, c := range canonicalFields {
		if c == f {
			return i
		}
	}
	panic("ingest: no canonical field " + f)
}

// convertField converts one source value to the canonical field's type.
// Empty strings are absent (nil), so a required field that is "" is missing.
func convertField(field string, src any, m *Mapping) (any, error) { return m.convert(field, src) }

func (m *Mapping) convert(field string, src any) (any, error) {
	if _, ok := src.(spread); ok && !textField(field) {
		src = one(src)
	}
	switch field {
	case "ts", "end_ts":
		if s, ok := src.(string); ok && strings.TrimSpace(s) == "" {
			return nil, nil
		}
		t, err := toTime(src, m)
		if err != nil {
			return nil, err
		}
		return t, nil
	case "prompt_tokens", "completion_tokens", "status", "cached_tokens", "bootstrap_room":
		if s, ok := src.(string); ok && strings.TrimSpace(s) == "" {
			return nil, nil
		}
		n, err := toInt(src)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, errors.New("negative")
		}
		if field == "status" {
			if n > math.MaxInt32 {
				return nil, errors.New("out of range")
			}
			return int32(n), nil
		}
		return n, nil
	case "request_id", "tenant_id", "model", "rid", "instance", "bootstrap_host", "finish_type":
		s, err := toString(src)
		if err != nil || s == "" {
			return nil, err
		}
		return s, nil
	default:
		s, err := toText(src)
		if err != nil || s == "" {
			return nil, err
		}
		return s, nil
	}
}

func toString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return "", errors.New("not valid UTF-8")
		}
		return x, nil
	case json.Number:
		return x.String(), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil // as DuckDB's reader gives it
	default:
		return "", errors.New("not a string")
	}
}

// toText is toString for optional text fields, which also take a JSON
// object or array as its JSON text, as DuckDB's reader does: a prompt logged
// as a message list stays loaded.
func toText(v any) (string, error) {
	switch x := v.(type) {
	case spread:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, err := toText(e)
			if err != nil {
				return "", err
			}
			if s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n"), nil
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return "", errors.New("not a string")
		}
		return string(b), nil
	}
	return toString(v)
}

// toInt accepts integers written as JSON numbers or strings, including an
// integral float ("12.0", "1e3"); it refuses fractions.
func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		return parseInt(string(x))
	case string:
		return parseInt(strings.TrimSpace(x))
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, errors.New("out of range")
		}
		return int64(x), nil
	case float64:
		return floatToInt(x)
	case float32:
		return floatToInt(float64(x))
	default:
		return 0, errors.New("not an integer")
	}
}

func parseInt(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.New("not an integer")
	}
	return floatToInt(f)
}

func floatToInt(f float64) (int64, error) {
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errors.New("not an integer")
	}
	if f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0, errors.New("out of range")
	}
	return int64(f), nil
}

// Epoch values from 1e11 up are milliseconds: 1e11 seconds is the year 5138,
// 1e11 milliseconds is 1973, so the two ranges do not meet in real logs.
const epochMillisFrom = 1e11

// maxEpochSeconds is 9999-12-31T23:59:59Z.
const maxEpochSeconds = 253402300799

// timeLayouts are tried in order on timestamp strings under time_format auto.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z07", // DuckDB's own rendering: +00
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999", // no offset: the mapping's zone (UTC)
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// toTime normalises a timestamp to UTC with DuckDB's microsecond precision.
func toTime(v any, m *Mapping) (time.Time, error) {
	t, err := toTimeRaw(v, m)
	if err != nil {
		return time.Time{}, err
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, errors.New("not a timestamp (year out of range)")
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

func toTimeRaw(v any, m *Mapping) (time.Time, error) {
	format := m.TimeFormat
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case json.Number:
		return epoch(string(x), format)
	case int64, int32, int, float64:
		s, _ := toString(x)
		return epoch(s, format)
	case string:
		s := strings.TrimSpace(x)
		switch format {
		case "", "auto":
			if looksNumeric(s) {
				return epoch(s, format)
			}
			if t, ok := quickTime(s, m.loc); ok {
				return t, nil
			}
			for _, l := range timeLayouts {
				if t, err := time.ParseInLocation(l, s, m.loc); err == nil {
					return t, nil
				}
			}
			return time.Time{}, errors.New("not a timestamp")
		case "epoch_s", "epoch_ms", "epoch_ns":
			return epoch(s, format)
		case "rfc3339":
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return time.Time{}, errors.New("not an RFC 3339 timestamp")
			}
			return t, nil
		default:
			t, err := time.ParseInLocation(format, s, m.loc)
			if err != nil {
				return time.Time{}, fmt.Errorf("not a timestamp in the format %q", format)
			}
			return t, nil
		}
	default:
		return time.Time{}, errors.New("not a timestamp")
	}
}

// looksNumeric: a decimal number (sign, digits, fraction, exponent) and
// nothing else: not a date ("2026-09-01"), not hex, not "Inf".
func looksNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E':
		case (c == '-' || c == '+') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E'):
		default:
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// epoch converts epoch seconds or milliseconds written in decimal; the
// fraction is parsed as digits, not through a float, so microseconds survive.
func epoch(s, format string) (time.Time, error) {
	bad := errors.New("not a timestamp")
	if format == "epoch_ns" {
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ns < 0 {
			return time.Time{}, errors.New("not a timestamp (want integer nanoseconds)")
		}
		return time.Unix(0, ns), nil
	}
	if format != "" && format != "auto" && format != "epoch_s" && format != "epoch_ms" {
		return time.Time{}, bad
	}
	intPart, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(intPart, 10, 64)
	nanos := int64(0)
	if err == nil && frac != "" {
		for _, c := range frac {
			if c < '0' || c > '9' {
				err = bad
			}
		}
		if len(frac) > 9 {
			frac = frac[:9]
		}
		if err == nil {
			n, _ := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
			nanos = n
		}
	}
	if err != nil { // exponent forms: fall back to a float
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e18 {
			return time.Time{}, bad
		}
		sec = int64(math.Trunc(f))
		nanos = int64((f - math.Trunc(f)) * 1e9)
	}
	if sec < 0 || nanos < 0 {
		return time.Time{}, errors.New("not a timestamp (negative epoch)")
	}
	millis := format == "epoch_ms" || ((format == "" || format == "auto") && sec >= epochMillisFrom)
	if millis {
		ns := nanos / 1000
		nanos = (sec%1000)*1_000_000 + ns
		sec /= 1000
	}
	if sec > maxEpochSeconds {
		return time.Time{}, errors.New("not a timestamp (epoch out of range)")
	}
	return time.Unix(sec, nanos), nil
}

// addDuration returns ts + d, d a number of unit ("ms" or "s").
func addDuration(ts time.Time, d any, unit string) (time.Time, error) {
	var f float64
	switch x := d.(type) {
	case json.Number:
		v, err := x.Float64()
		if err != nil {
			return time.Time{}, errors.New("not a duration")
		}
		f = v
	case string:
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return time.Time{}, errors.New("not a duration")
		}
		f = v
	default:
		n, err := toInt(d)
		if err != nil {
			if fl, ok := d.(float64); ok {
				f = fl
				break
			}
			return time.Time{}, errors.New("not a duration")
		}
		f = float64(n)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e12 {
		return time.Time{}, errors.New("not a duration")
	}
	scale := float64(time.Millisecond)
	if unit == "s" {
		scale = float64(time.Second)
	}
	return ts.Add(time.Duration(f * scale)).UTC().Truncate(time.Microsecond), nil
}

// brackets counts the opening brackets of b: a cheap bound of its depth.
func brackets(b []byte) int { return bytes.Count(b, []byte("[")) + bytes.Count(b, []byte("{")) }

// jsonDepth is the deepest nesting of b's arrays and objects, strings
// skipped.
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return deepest
}

// quickTime reads the usual forms of the layouts above, what every real
// log writes (2006-01-02T15:04:05.999999, with T or a space, then nothing,
// Z or +hh:mm), without trying the layouts one by one: a time with no
// offset failed six layouts before the seventh took it, a tenth of an
// engine line's CPU. Anything else (out of range, another form) is left to
// the layouts, so every time reads as they read it.
func quickTime(s string, loc *time.Location) (time.Time, bool) {
	c, ok := readStamp(s)
	if !ok {
		return time.Time{}, false
	}
	if c.zone == zoneNone {
		return time.Date(int(c.year), time.Month(c.month), int(c.day), int(c.hour), int(c.minute), int(c.sec), int(c.nsec), loc), true
	}
	t := time.Date(int(c.year), time.Month(c.month), int(c.day), int(c.hour), int(c.minute), int(c.sec), int(c.nsec), time.UTC)
	return t.Add(-time.Duration(c.off) * time.Second), true
}
