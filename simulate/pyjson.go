package simulate

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The real layouts are written byte for byte the way their programs write
// them: Python's json.dumps (SGLang's request log: keys in insertion order,
// ", " and ": " separators, non-ASCII kept, floats as Python's repr) and
// PostgreSQL's jsonb output (LiteLLM's JSON columns: keys sorted by length,
// then bytes; the same separators; numbers as numeric text).

// kv is one member of an ordered JSON object.
type kv struct {
	k string
	v any
}

// obj is a JSON object whose members keep their order.
type obj []kv

// rawJSON is a value already written in the form it is appended in (a
// part written once and used in two lines).
type rawJSON []byte

// appendPyJSON appends v as json.dumps(v, ensure_ascii=False) writes it.
// Values: nil, bool, int, int64, float64, string, obj, []any.
func appendPyJSON(b []byte, v any) []byte { return appendJSONValue(b, v, false) }

// appendJSONB appends v as PostgreSQL prints a jsonb value.
func appendJSONB(b []byte, v any) []byte { return appendJSONValue(b, v, true) }

func appendJSONValue(b []byte, v any, jsonb bool) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		if jsonb {
			return append(b, numericFloat(v)...)
		}
		return append(b, pyFloat(v)...)
	case string:
		return appendJSONStr(b, v)
	case rawJSON:
		return append(b, v...)
	case []any:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONValue(b, x, jsonb)
		}
		return append(b, ']')
	case obj:
		if jsonb {
			v = slices.Clone(v)
			// jsonb stores object keys shorter first, then in byte order.
			slices.SortStableFunc(v, func(x, y kv) int {
				if len(x.k) != len(y.k) {
					return len(x.k) - len(y.k)
				}
				return strings.Compare(x.k, y.k)
			})
		}
		b = append(b, '{')
		for i, m := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONStr(b, m.k)
			b = append(b, ": "...)
			b = appendJSONValue(b, m.v, jsonb)
		}
		return append(b, '}')
	}
	panic("simulate: no JSON form for a value of this type")
}

// appendJSONStr escapes as both json.dumps(ensure_ascii=False) and jsonb's
// output do: the quote, the backslash and control characters only. Runs of
// bytes that need no escape are appended whole (texts are most of the
// real layouts' bytes).
func appendJSONStr(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// pyFloat is Python's repr of a float: the shortest digits that round-trip,
// ".0" on whole numbers, an exponent below 1e-4 and from 1e16 on.
func pyFloat(f float64) string {
	a := math.Abs(f)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64) // 1e-05, 1.5e-05, like Python
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// numericFloat is how a float written by json.dumps comes back out of a
// jsonb column: numeric keeps the digits, never an exponent.
func numericFloat(f float64) string {
	s := pyFloat(f)
	if strings.Contains(s, "e") {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

// pgFloat8 is PostgreSQL's output of a double precision value (shortest
// round-trip digits, an exponent below 1e-4 and from 1e15 on).
func pgFloat8(f float64) string {
	a := math.Abs(f)
	if a != 0 && (a < 1e-4 || a >= 1e15) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// isoLocal is Python's datetime.isoformat() of a naive local time (the
// hosts run on UTC): microseconds, or none at all when they are zero.
func isoLocal(us int64) string {
	t := time.UnixMicro(us).UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// pgTimestamp3 is how psql prints a timestamp(3) without time zone (Prisma's
// DateTime): no zone, milliseconds with trailing zeros dropped.
func pgTimestamp3(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	s := t.Format("2006-01-02 15:04:05")
	if f := t.Nanosecond() / 1e6; f != 0 {
		s += strings.TrimRight("."+strconv.Itoa(1000 + f)[1:], "0")
	}
	return s
}

// appendPgCSV appends one CSV field as COPY ... CSV writes it: NULL (nil)
// as nothing, an empty string quoted, quotes when the value holds the
// delimiter, a quote or a line break.
func appendPgCSV(b []byte, v *string) []byte {
	if v == nil {
		return b
	}
	s := *v
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}
