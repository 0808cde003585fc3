package ingest

import (
	"github.com/leakmap/leakmap/ingest/layouts"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseLine feeds arbitrary lines to the line-level parse and validation
// of the checked path, under each preset's mapping. It must never panic, and
// a line it accepts must give a row the requests table takes: every
// required field present, valid UTF-8 text, UTC times in DuckDB's range,
// counts not negative.
func FuzzParseLine(f *testing.F) {
	for _, r := range sampleRows {
		f.Add([]byte(strings.TrimSpace(jsonl(r))), uint8(0))
	}
	for _, s := range []string{
		`{"request_id":"x","ts":1788336843512,"tenant_id":"t","model":"m","prompt_tokens":"12"}`,
		`{"request_id":"x","ts":"1788336843.5","tenant_id":"t","model":"m","prompt_tokens":1e3,"status":"200"}`,
		`{"request_id":7,"ts":"2026-09-02 08:14:03+00","tenant_id":"t","model":"m","prompt_tokens":12.0}`,
		`{"id":"01J8","created_at":"2026-09-02T08:14:03Z","account_id":"a","model":"m","status_code":200,"tokens_in":5,"tokens_out":1,"duration":6412}`,
		`{"request_id":"r1","startTime":"2026-09-02 08:14:03.512","team_id":"t","model_group":"","model":"m","prompt_tokens":"5","status":"failure","metadata":"{\"error_information\":{\"error_code\":\"429\"}}","messages":"[{\"role\":\"user\",\"content\":\"hi\"}]"}`,
		`{"spanId":"a1","startTimeUnixNano":"1788336843512000000","attributes":[{"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}}],"$up":{"$up":{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"h"}}]}}}}`,
		`{"rid":"9f","received":{"timestamp":"2026-09-02T08:14:03.512Z","obj":{"user":"u"}},"finished":{"out":{"meta_info":{"prompt_tokens":1}}}}`,
		`{"request_id":"x"`, `[1]`, `null`, `{}`, "\xff", `{"ts":{"a":[]}}`, `{"request_id":"x","ts":"-0001-01-01T00:00:00Z"}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(2))
	}
	presets := []string{"canonical", "gateway", "engine", "litellm-spendlogs", "otlp-genai"}
	mappings := make([]*Mapping, len(presets))
	for i, p := range presets {
		lf, err := layouts.Get(p)
		if err != nil {
			f.Fatal(err)
		}
		role := ""
		if lf.DefaultRole() == "" {
			role = "decode"
		}
		m, err := compileMapping(lf, SourceKeys{Role: role, Model: "fallback", Label: "cli"})
		if err != nil {
			f.Fatal(err)
		}
		mappings[i] = m
	}
	inst := fileInstance{prefill: "p", decode: "d"}
	f.Fuzz(func(t *testing.T, line []byte, preset uint8) {
		m := mappings[int(preset)%len(mappings)]
		v, err := parseLine(line, m, inst)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty reason")
			}
			return
		}
		for _, req := range m.required {
			if v[slices.Index(m.fields, req)] == nil {
				t.Fatalf("accepted without %s: %q", req, line)
			}
		}
		for i, val := range v[:len(m.fields)] {
			switch x := val.(type) {
			case nil:
			case string:
				if x == "" || !utf8.ValidString(x) {
					t.Fatalf("%s: bad text %q", m.fields[i], x)
				}
			case time.Time:
				if x.Location() != time.UTC || x.Year() < 1 || x.Year() > 9999 || x.Nanosecond()%1000 != 0 {
					t.Fatalf("%s: bad time %v", m.fields[i], x)
				}
			case int64:
				if x < 0 {
					t.Fatalf("%s: negative %d", m.fields[i], x)
				}
			case int32:
				if x < 0 {
					t.Fatalf("%s: negative %d", m.fields[i], x)
				}
			default:
				t.Fatalf("%s: unexpected type %T", m.fields[i], val)
			}
		}
	})
}

func TestTopLevelKeys(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`{}`, 0},
		{`{"a":1}`, 1},
		{`{"a":1,"a":2}`, 2},
		{`{"a":{"b":1,"c":2}}`, 1},
		{`{"a":"x\":y","b":[{"c":1},"d"]}`, 2},
		{` { "a" : 1 ,` + "\n\t" + `"b" :2}`, 2},
		{`{"a":"\\","b":1}`, 2},
		{`{"a":"b:","c":"\u0022d\u0022:"}`, 2},
		{`{"request_id":"r","tenant_id":"first","tenant_id":"second","x":{"tenant_id":1}}`, 4},
	}
	for _, tt := range tests {
		if got := topLevelKeys([]byte(tt.in)); got != tt.want {
			t.Errorf("topLevelKeys(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
