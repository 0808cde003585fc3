package ingest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A path says where a value is in a record (docs/layouts.md "Paths"):
// names separated by dots walk into objects; [N] takes an array's element,
// [] every element (a text field joins them, one a line), [KEY] the value
// of the element {"key": KEY, "value": ...} of a key/value attribute array
// (OTLP), unwrapped from its {"stringValue": ...} form. A string holding
// JSON (a CSV cell, Cloudflare's metadata) is walked into as if it were
// the JSON itself. $file.NAME is a group of the layout's file_name
// pattern; $up is the object holding a nested record's array.
type path []step

type stepKind uint8

const (
	stepField stepKind = iota
	stepIndex
	stepAll
	stepKey
)

type step struct {
	kind stepKind
	name string // field or key
	i    int    // index
}

// spread is what [] gives: the values found under every element.
type spread []any

func parsePath(s string) (path, error) {
	var out path
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '.':
			i++
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("path %q: [ without ]", s)
			}
			in := s[i+1 : i+j]
			i += j + 1
			switch n, err := strconv.Atoi(in); {
			case in == "":
				out = append(out, step{kind: stepAll})
			case err == nil && n >= 0:
				out = append(out, step{kind: stepIndex, i: n})
			default:
				out = append(out, step{kind: stepKey, name: in})
			}
		default:
			j := strings.IndexAny(s[i:], ".[")
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, step{kind: stepField, name: s[i : i+j]})
			i += j
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("path %q: empty", s)
	}
	return out, nil
}

// String writes the path back.
func (p path) String() string {
	var b strings.Builder
	for i, st := range p {
		switch st.kind {
		case stepField:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.name)
		case stepIndex:
			fmt.Fprintf(&b, "[%d]", st.i)
		case stepAll:
			b.WriteString("[]")
		case stepKey:
			b.WriteString("[" + st.name + "]")
		}
	}
	return b.String()
}

// plain reports whether the path is names only (a.b.c).
func (p path) plain() bool {
	for _, st := range p {
		if st.kind != stepField {
			return false
		}
	}
	return true
}

// lookupPath finds the path's value in rec; JSON null is absent. A column
// named with dots ("meta.account") is tried whole first.
func lookupPath(rec map[string]any, p path) (any, bool) {
	if len(p) > 1 && p.plain() {
		// The dotted name built on the stack: this runs for every field
		// of every record.
		var buf [128]byte
		name := buf[:0]
		for i, st := range p {
			if i > 0 {
				name = append(name, '.')
			}
			name = append(name, st.name...)
		}
		if v, ok := rec[string(name)]; ok {
			return v, v != nil
		}
	}
	return walk(rec, p)
}

func walk(cur any, p path) (any, bool) {
	for i, st := range p {
		cur = jsonIn(cur)
		switch st.kind {
		case stepField:
			obj, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			v, ok := obj[st.name]
			if !ok || v == nil {
				return nil, false
			}
			if s, isStr := v.(string); isStr && i+1 < len(p) && looksJSON(s) {
				// Parsed once per record: later paths find the object.
				v = jsonIn(s)
				obj[st.name] = v
			}
			cur = v
		case stepIndex:
			arr, ok := cur.([]any)
			if !ok || st.i >= len(arr) {
				return nil, false
			}
			cur = arr[st.i]
		case stepKey:
			arr, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, e := range arr {
				if kv, ok := e.(map[string]any); ok && kv["key"] == st.name {
					cur, found = anyValue(kv["value"]), true
					break
				}
			}
			if !found {
				return nil, false
			}
		case stepAll:
			arr, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			var out spread
			for _, e := range arr {
				if v, ok := walk(e, p[i+1:]); ok {
					out = append(out, v)
				}
			}
			return out, len(out) > 0
		}
		if cur == nil {
			return nil, false
		}
	}
	return cur, true
}

func looksJSON(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) > 1 && (s[0] == '{' && s[len(s)-1] == '}' || s[0] == '[' && s[len(s)-1] == ']')
}

// jsonIn returns the JSON a string holds, else v itself.
func jsonIn(v any) any {
	s, ok := v.(string)
	if !ok || !looksJSON(s) {
		return v
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return v
	}
	return out
}

// anyValue unwraps an OTLP AnyValue ({"stringValue": "x"}, {"intValue":
// "12"}, {"arrayValue": {"values": [...]}}, ...); anything else is itself.
func anyValue(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for k, x := range m {
		switch k {
		case "stringValue", "intValue", "doubleValue", "boolValue", "bytesValue":
			return x
		case "arrayValue":
			xm, _ := x.(map[string]any)
			vals, _ := xm["values"].([]any)
			out := make([]any, len(vals))
			for i, e := range vals {
				out[i] = anyValue(e)
			}
			return out
		case "kvlistValue":
			xm, _ := x.(map[string]any)
			vals, _ := xm["values"].([]any)
			out := map[string]any{}
			for _, e := range vals {
				if kv, ok := e.(map[string]any); ok {
					if k, ok := kv["key"].(string); ok {
						out[k] = anyValue(kv["value"])
					}
				}
			}
			return out
		}
	}
	return v
}
