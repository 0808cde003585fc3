package ingest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/leakmap/leakmap/ingest/layouts"
)

// pickMappings: every named layout under each of its record roles (the
// mappings that pick), plus a mapping with [], [N], [KEY] and dotted
// column names.
func pickMappings(t testing.TB) []*Mapping {
	var out []*Mapping
	for _, name := range layouts.Names() {
		f, err := layouts.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, role := range f.Roles {
			if role == layouts.RoleCanonical {
				continue
			}
			m, err := compileMapping(f, SourceKeys{Role: role, Model: "fallback", TenantField: "custom_labels.team", Label: "t"})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	f, err := layouts.Parse([]byte(`role: gateway
fields:
  rid: [meta.id, id]
  ts: ['times[0]', t.start]
  tenant_id: 'attrs[tenant]'
  model: a.b.c
  prompt_tokens: n
  prompt_text: 'msgs[].content'
  response_text: out
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := compileMapping(f, SourceKeys{Label: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return append(out, m)
}

var pickLines = []string{
	`{"timestamp": "2026-09-02T08:14:03.512", "event": "request.received", "rid": "r1", "obj": {"rid": "r1", "bootstrap_room": 12, "bootstrap_host": "10.0.0.1", "text": "hi\nthere \u00e9 \ud83d\ude00 \ud800 x", "custom_labels": {"team": "t1"}, "sampling_params": {"stop": [], "top_p": 0.95, "n": null}}}`,
	`{"timestamp": "2026-09-02T08:14:05.1", "event": "request.finished", "rid": "r1", "obj": {"rid": "r1", "bootstrap_room": 12}, "out": {"text": "ok", "output_ids": [1, 2], "meta_info": {"prompt_tokens": 1, "completion_tokens": 2, "cached_tokens": 0, "e2e_latency": 2.5e0, "finish_reason": {"type": "abort", "message": "too long", "status_code": 400}}}}`,
	`{"rid": "a", "rid": "b", "event": "request.received", "obj": {"bootstrap_room": 1, "bootstrap_room": 2}}`,
	`{"request_id":"r1","startTime":"2026-09-02 08:14:03.512","team_id":"t","model_group":"","model":"m","prompt_tokens":"5","status":"failure","metadata":"{\"error_information\":{\"error_code\":\"429\"}}","messages":"[{\"role\":\"user\",\"content\":\"hi\"}]","response":{"choices":[{"message":{"content":"yo"}}],"usage":{"prompt_tokens_details":{"cached_tokens":3}}}}`,
	`{"meta.id": "dotted", "meta": {"id": "nested"}, "times": ["2026-09-02T08:14:03Z"], "attrs": [{"key": "tenant", "value": {"stringValue": "t9"}}], "a": {"b": {"c": "m"}}, "n": 12, "msgs": [{"content": "x"}, {"content": "y"}], "out": {"k": [1, {"z": null}]}}`,
	`{"a": {"b": "{\"c\": \"from a string\"}"}, "n": -0.5e-3, "out": "\"quoted\""}`,
	`  {"rid": "x", "out": true, "n": false, "m": null}  `,
	`{"id":1,"created_at":"2026-09-02T08:14:03Z","metadata":"{\"team\":\"q\"}","tokens_in":5}`,
	`{"\u0072id": "escaped key", "event": "request.received"}`,
	`{}`, `{"rid": {}}`, `{"rid": []}`, `{"a":1}{"b":2}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, `{"a":"\x"}`,
	`{"a":"` + "\x01" + `"}`, `{"a" 1}`, `{"a":1,}`, `{,}`, `[1]`, `"s"`, `null`, ``, `{"a":"\ud83d"}`, `{"a":"\u12"}`,
	"{\"a\":\"\xff\"}", `{"a":[1,2,]}`, `{"a":1e}`, `{"a":1E+5}`, `{"rid":"x"} `, `{"rid":"x"} x`,
	`{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"rid":` + strings.Repeat(`{"a":`, 999) + `1` + strings.Repeat("}", 999) + `}`,
}

// TestPickMatchesFullDecode: on lines good and bad, under every layout,
// the picked decode gives the fields, the row and the reason the full
// decode gives; where the picker gives up, the full decode runs.
func TestPickMatchesFullDecode(t *testing.T) {
	ms := pickMappings(t)
	for _, line := range pickLines {
		for _, m := range ms {
			checkPick(t, []byte(line), m)
		}
	}
}

func checkPick(t *testing.T, line []byte, m *Mapping) {
	t.Helper()
	for _, tree := range []*pickTree{m.pick, m.pickEvent} {
		picked, ok := pickLine(line, tree)
		full, err := parseJSONObject(line)
		if !ok {
			continue
		}
		if err != nil {
			t.Fatalf("%s: picker took %q, the full decode refused it: %v", m.name, line, err)
		}
		var paths []path
		if tree == m.pick {
			for _, s := range m.specs {
				for _, a := range s {
					paths = append(paths, a.p)
				}
			}
		} else {
			for _, s := range m.specs {
				for _, a := range s {
					if a.p[0].name == "received" || a.p[0].name == "finished" {
						paths = append(paths, a.p[1:])
					}
				}
			}
			paths = append(paths, path{{name: m.events.Key}}, path{{name: m.events.Kind}})
		}
		if m.durPath != nil && tree == m.pick {
			paths = append(paths, m.durPath)
		}
		for _, p := range paths {
			a, aok := lookupPath(picked, p)
			b, bok := lookupPath(full, p)
			if aok != bok || !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: %q at %s: picked %#v %v, full %#v %v", m.name, line, p, a, aok, b, bok)
			}
		}
		if tree == m.pick {
			p2, _ := pickLine(line, tree)
			f2, _ := parseJSONObject(line)
			va, ea := canonicalRow(p2, m, fileInstance{})
			vb, eb := canonicalRow(f2, m, fileInstance{})
			if !reflect.DeepEqual(va, vb) || (ea == nil) != (eb == nil) || (ea != nil && ea.Error() != eb.Error()) {
				t.Fatalf("%s: %q: picked row %v %v, full %v %v", m.name, line, va, ea, vb, eb)
			}
		}
	}
}

// TestPickCell: a CSV cell holding JSON, picked, gives what walking into
// it gives.
func TestPickCell(t *testing.T) {
	f, err := layouts.Get("litellm-spendlogs")
	if err != nil {
		t.Fatal(err)
	}
	m, err := compileMapping(f, SourceKeys{Label: "t"})
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]string{
		"response": `{"id": "x", "choices": [{"message": {"content": "a\nb", "role": "assistant"}}], "usage": {"prompt_tokens_details": {"cached_tokens": 7}, "total_tokens": 9}}`,
		"metadata": `{"error_information": {"error_code": "429", "llm_provider": "openai"}, "user_api_key": "k"}`,
		"messages": `[{"role": "user", "content": "hi"}]`,
	}
	for _, bad := range []string{`{"a":1} x}`, `{"a":}`, `{ }`, "{\"a\":\"\xff\"}", `[1,2]`, `{"choices": "[{\"message\": {\"content\": \"in a string\"}}]"}`} {
		cells["response"] = bad
		cells["metadata"] = bad
		obj, ref := map[string]any{}, map[string]any{}
		for k, v := range cells {
			obj[k] = m.pickCell(k, v)
			ref[k] = v
		}
		va, ea := recordRow(obj, m)
		vb, eb := recordRow(ref, m)
		if !reflect.DeepEqual(va, vb) || ea.Error() != eb.Error() {
			t.Fatalf("%q: picked %v %v, walked %v %v", bad, va, ea, vb, eb)
		}
	}
	if v := m.pickCell("response", `{"choices": [{"message": {"content": "x"}}], "other": [1]}`); !reflect.DeepEqual(v,
		map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "x"}}}}) {
		t.Fatalf("picked %#v", v)
	}
	if v := m.pickCell("api_key", `{"a": 1}`); v != `{"a": 1}` {
		t.Fatalf("a column no path walks into was decoded: %#v", v)
	}
}

// TestUnquoteJSON: escapes decode as encoding/json decodes them.
func TestUnquoteJSON(t *testing.T) {
	for _, s := range []string{`a\nb`, `\u00e9\u00E9`, `\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ud83d\u0041`, `\ude00\ud83d`, `\/\"\\\b\f\r\t`, `\ud83d\ud83d\ude00`} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := unquoteJSON([]byte(s))
		if !ok || got != want {
			t.Errorf("%q: got %q, want %q", s, got, want)
		}
	}
}

// FuzzPick: whatever the line, the picker never takes what the full
// decode refuses, and what it takes gives the same fields and row.
func FuzzPick(f *testing.F) {
	for _, l := range pickLines {
		f.Add([]byte(l))
	}
	ms := pickMappings(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, m := range ms {
			checkPick(t, line, m)
		}
		if utf8.Valid(line) {
			var want string
			if err := json.Unmarshal(append(append([]byte(`"`), line...), '"'), &want); err == nil {
				p := picker{b: append(append([]byte(`"`), line...), '"')}
				s, e, esc, ok := p.str()
				if !ok || p.i != len(p.b) {
					t.Fatalf("%q: a string encoding/json reads, the picker refused", line)
				}
				got := string(p.b[s:e])
				if esc {
					g, _ := unquoteJSON(p.b[s:e])
					got = g.(string)
				}
				if got != want {
					t.Fatalf("%q: got %q, want %q", line, got, want)
				}
			}
		}
	})
}

// TestQuickTime: every time quickTime reads, the layouts read as the same
// instant; what it leaves, they read or refuse as before.
func TestQuickTime(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	cases := []string{
		"2026-09-02T08:14:03", "2026-09-02 08:14:03", "2026-09-02T08:14:03.5", "2026-09-02T08:14:03.123456789",
		"2026-09-02T08:14:03.1234567891", "2026-09-02T08:14:03.", "2026-09-02T08:14:03Z", "2026-09-02T08:14:03.709862Z",
		"2026-09-02T08:14:03+02:00", "2026-09-02T08:14:03-05:30", "2026-09-02T08:14:03-00:00", "2026-09-02T08:14:03+00:00",
		"2026-09-02T08:14:03+24:00", "2026-09-02T08:14:03+23:59", "2026-09-02T08:14:03+0200", "2026-09-02T08:14:03+02",
		"2026-02-29T00:00:00", "2028-02-29T00:00:00", "2026-04-31T00:00:00", "2026-13-01T00:00:00", "2026-00-01T00:00:00",
		"2026-09-00T00:00:00", "2026-09-02T24:00:00", "2026-09-02T23:60:00", "2026-09-02T23:59:60", "2026-09-02t08:14:03",
		"2026-09-02T08:14:03z", "0000-01-01T00:00:00", "9999-12-31T23:59:59.999999Z", "2026-03-29T02:30:00", "2026-10-25T02:30:00",
		"2026-09-02T08:14:03 ", "2026-9-02T08:14:03", "+026-09-02T08:14:03", "2026-09-02T08:14:03.5Z07:00", "2026-09-02T08:14:03.+01:00",
		"2026-09-02T08:14:03,5", "2026-09-02", "2026-09-02T08:14", "2026-09-02T08:14:03.0000000000Z",
	}
	for _, loc := range []*time.Location{time.UTC, paris} {
		m := &Mapping{loc: loc}
		for _, s := range cases {
			q, ok := quickTime(s, loc)
			var want time.Time
			var werr error = errors.New("not a timestamp")
			for _, l := range timeLayouts {
				if tt, err := time.ParseInLocation(l, s, loc); err == nil {
					want, werr = tt, nil
					break
				}
			}
			if ok && (werr != nil || !q.Equal(want)) {
				t.Errorf("%s in %s: quick %v, layouts %v %v", s, loc, q, want, werr)
			}
			// toTime trims the value and keeps DuckDB's years.
			want, werr = time.Time{}, errors.New("not a timestamp")
			for _, l := range timeLayouts {
				if tt, err := time.ParseInLocation(l, strings.TrimSpace(s), loc); err == nil && tt.Year() >= 1 {
					want, werr = tt, nil
					break
				}
			}
			got, gerr := toTime(s, m)
			if (gerr == nil) != (werr == nil) || (gerr == nil && !got.Equal(want.UTC().Truncate(time.Microsecond))) {
				t.Errorf("%s in %s: toTime %v %v, layouts %v %v", s, loc, got, gerr, want, werr)
			}
		}
	}
}
