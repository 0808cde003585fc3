package ingest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/ingest/layouts"
)

func canonicalMappingForTest(t testing.TB, timeFormat string) *Mapping {
	t.Helper()
	lf, err := layouts.Get("canonical")
	if err != nil {
		t.Fatal(err)
	}
	if timeFormat != "" {
		lf.TimeFormat = timeFormat
	}
	m, err := compileMapping(lf, SourceKeys{Label: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.isIdentity() {
		t.Fatalf("the canonical layout (time_format %q) is not the identity mapping", timeFormat)
	}
	return m
}

// quickLines are canonical records and near misses: each is either read by
// quickCanonical or left to parseLine, and what it reads must be parseLine's.
var quickLines = []string{
	`{"request_id":"req-0","ts":"2026-08-27T00:00:00Z","end_ts":"2026-08-27T00:00:00.5Z","tenant_id":"tenant-0","model":"glm-5.3","prompt_tokens":100,"completion_tokens":1,"status":200,"prefill_instance":"prefill-0","decode_instance":"decode-0","prompt_text":"summarise","response_text":"the figures"}`,
	`{"request_id":"req-1","ts":"2026-08-27T02:00:00.25+02:00","end_ts":"2026-08-27T02:00:00.751+02:00","tenant_id":"t","model":"m","prompt_tokens":104829,"completion_tokens":2,"status":200}`,
	`{"request_id":"r","ts":"2026-08-26T19:00:00.5-05:00","tenant_id":"t","model":"m","prompt_tokens":0}`,
	` { "request_id" : "r" , "ts" : "2026-08-26 19:00:00.123456789" , "tenant_id" : "t" , "model" : "m" , "prompt_tokens" : 5 } `,
	`{"request_id":"r","ts":"2026-08-26","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":" 2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"0000-01-01T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"9999-12-31T23:59:59.9999999-01:00","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"2026-02-30T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":1788336843512,"tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"1788336843.5","tenant_id":"t","model":"m","prompt_tokens":"12"}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":1e3}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":11.5}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":-1}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":-0}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":0123}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":999999999999999999}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":9999999999999999999}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":2147483648}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":2147483647}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":"200"}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":"0x1F"}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":true}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"status":null}`,
	`{"request_id":7,"ts":"2026-08-26T00:00:00Z","tenant_id":true,"model":"m","prompt_tokens":5}`,
	`{"request_id":"","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":null,"ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","end_ts":"","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","end_ts":"soon","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"prompt_text":"a\nb \"q\" \u00e9 \ud800 \ud83d\ude00"}`,
	`{"request_id":"r\u0000","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"prompt_text":[{"role":"user","content":"hi"}]}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"response_text":{"a":1}}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"prompt_text":""}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"extra":{"deep":[1,2,{"x":null}]},"more":"x"}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,"extra":{"deep":[1,2,}}`,
	`{"request_id":"a","request_id":"b","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request\u005fid":"a","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m"}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}x`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5}{}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5,}`,
	`{"request_id":"r","ts":"2026-08-26T00:00:00Z","tenant_id":"t","model":"m","prompt_tokens":5`,
	"{\"request_id\":\"r\xff\",\"ts\":\"2026-08-26T00:00:00Z\",\"tenant_id\":\"t\",\"model\":\"m\",\"prompt_tokens\":5}",
	"{\"request_id\":\"r\tx\",\"ts\":\"2026-08-26T00:00:00Z\",\"tenant_id\":\"t\",\"model\":\"m\",\"prompt_tokens\":5}",
	`{}`, `[]`, `null`, `"x"`, ``, `{"request_id":"r"`, `{"a":1}`,
}

// TestQuickCanonicalAgreesWithParseLine: every line quickCanonical reads,
// parseLine reads to the same row, under each time format the fast path
// takes; and the usual records are read quickly (the test can fail both
// ways).
func TestQuickCanonicalAgreesWithParseLine(t *testing.T) {
	for _, tf := range []string{"", "auto", "rfc3339"} {
		m := canonicalMappingForTest(t, tf)
		quick := 0
		for _, line := range quickLines {
			if checkQuickAgrees(t, m, []byte(line)) {
				quick++
			}
		}
		if quick < 10 {
			t.Errorf("time_format %q: quickCanonical read only %d of %d lines", tf, quick, len(quickLines))
		}
	}
	m := canonicalMappingForTest(t, "")
	if _, ok := quickCanonical([]byte(quickLines[0]), m); !ok {
		t.Errorf("quickCanonical left the usual record to parseLine: %s", quickLines[0])
	}
}

// carriedState is a reader's quickState carried across every line the
// tests and the fuzzer give checkQuickAgrees.
var carriedState quickState

// checkQuickAgrees fails t if quickCanonical reads line otherwise than
// parseLine; it reports whether quickCanonical read it.
func checkQuickAgrees(t testing.TB, m *Mapping, line []byte) bool {
	t.Helper()
	qv, ok := quickCanonical(line, m)
	// A reader's state from the lines before (the keys' order, the last
	// date) changes nothing in what it reads.
	var q quickRow
	if carried := quickParse(line, m, &q, &carriedState); carried != ok || ok && !reflect.DeepEqual(q.values(), qv) {
		t.Fatalf("%q: quickParse after other lines %v %#v, alone %v %#v", line, carried, q.values(), ok, qv)
	}
	if !ok {
		return false
	}
	v, err := parseLine(line, m, fileInstance{})
	if err != nil {
		t.Fatalf("quickCanonical read %q, parseLine rejects it: %v", line, err)
	}
	if !reflect.DeepEqual(qv, v) {
		t.Fatalf("%q:\nquickCanonical %#v\nparseLine      %#v", line, qv, v)
	}
	return true
}

func FuzzQuickCanonical(f *testing.F) {
	for _, l := range quickLines {
		f.Add([]byte(l), uint8(0))
	}
	for _, r := range sampleRows {
		f.Add([]byte(strings.TrimSpace(jsonl(r))), uint8(1))
	}
	ms := []*Mapping{canonicalMappingForTest(f, ""), canonicalMappingForTest(f, "rfc3339")}
	f.Fuzz(func(t *testing.T, line []byte, which uint8) {
		checkQuickAgrees(t, ms[int(which)%len(ms)], line)
	})
}

// TestQuickMicrosIsQuickTime: quickMicros reads what quickTime and
// toTime's checks read, to the microsecond, and refuses what they refuse.
func TestQuickMicrosIsQuickTime(t *testing.T) {
	m := canonicalMappingForTest(t, "")
	times := []string{
		"2026-08-27T00:00:00Z", "2026-08-27 00:00:00", "2026-08-27T02:00:00.25+02:00", "2026-08-26T19:00:00.5-05:00",
		"0000-12-31T23:00:00-02:00", "0000-12-31T23:00:00Z", "0001-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00",
		"9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59-00:01", "9999-12-31T22:59:59-01:00",
		"1969-12-31T23:59:59.9999995Z", "1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "2024-02-30T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:60Z",
		"2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567891Z", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+05:60",
		"2026-01-01T00:00:00+0500", "2026-01-01T00:00:00z", "2026-01-01X00:00:00Z", "2026-1-01T00:00:00Z", "-001-01-01T00:00:00Z",
		"1585-10-15T12:34:56.000001Z", "0400-02-29T00:00:00Z", "0100-02-29T00:00:00Z",
	}
	for y := 0; y < 10000; y += 37 {
		times = append(times, fmt.Sprintf("%04d-03-01T00:00:00Z", y), fmt.Sprintf("%04d-02-28 23:59:59.5+14:00", y))
	}
	var shared quickState // dates carried from one time to the next, repeats and all
	for i, s := range times {
		us, ok := quickMicros([]byte(s), nil)
		for _, st := range []*quickState{&shared, &shared, {}} {
			if cus, cok := quickMicros([]byte(s), st); cus != us || cok != ok {
				t.Errorf("%s after %s: quickMicros with the last date %d %v, alone %d %v", s, times[max(i-1, 0)], cus, cok, us, ok)
			}
		}
		var want time.Time
		wok := false
		if tt, qok := quickTime(s, m.loc); qok {
			if tt.Year() >= 1 && tt.Year() <= 9999 {
				want, wok = tt.UTC().Truncate(time.Microsecond), true
			}
		}
		if ok != wok || ok && us != want.UnixMicro() {
			t.Errorf("%s: quickMicros %d %v, quickTime %v %v", s, us, ok, want, wok)
		}
	}
}

// TestPlainStrIsByteLoop holds plainStr's eight-bytes-at-a-time scan to
// the plain definition (the string ends at the first '"'; a '\\' or a
// byte below 0x20 before it gives up) on random texts that put those
// bytes at every offset of a word, near the line's end and past it,
// among bytes that borrow (0x00, 0x01, 0x1f, 0x21, 0x5b, 0x5d, 0x80, 0xff).
func TestPlainStrIsByteLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	alphabet := []byte{'a', 'z', '0', ' ', '"', '\\', 0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0xc3, 0xa9, 0xff}
	for n := range 100_000 {
		b := []byte{'"'}
		for k := r.IntN(40); k > 0; k-- {
			c := byte('a' + r.IntN(26))
			if r.IntN(6) == 0 {
				c = alphabet[r.IntN(len(alphabet))]
			}
			b = append(b, c)
		}
		wantS, wantE, wantOK := 1, 0, false
		for i := 1; i < len(b); i++ {
			if b[i] == '"' {
				wantE, wantOK = i, true
				break
			}
			if b[i] == '\\' || b[i] < 0x20 {
				break
			}
		}
		p := picker{b: b}
		s, e, ok := p.plainStr()
		if ok != wantOK || ok && (s != wantS || e != wantE || p.i != e+1) || !ok && p.i != 0 {
			t.Fatalf("text %d %q: plainStr = %d, %d, %v (p.i %d), want %d, %d, %v", n, b, s, e, ok, p.i, wantS, wantE, wantOK)
		}
	}
}
