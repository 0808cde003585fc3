package ingest

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
)

// A Cloudflare AI Gateway logs page as the API returns it, pretty-printed
// (curl | jq .): metadata is a JSON string; rows carry no account.
const cloudflarePage = `{
  "result": [
    {
      "id": "01J8ZK3V6Q9TQ",
      "created_at": "2026-09-02T08:14:03.512Z",
      "provider": "workers-ai",
      "model": "glm-5.3",
      "path": "v1/chat/completions",
      "status_code": 200,
      "success": true,
      "cached": false,
      "tokens_in": 812004,
      "tokens_out": 377,
      "duration": 6412,
      "metadata": "{\"account\":\"acct_4b\",\"env\":\"prod\"}",
      "cost": 0,
      "step": 0
    },
    {
      "id": "01J8ZK3V6Q9TR",
      "created_at": "2026-09-02T08:15:00Z",
      "provider": "workers-ai",
      "model": "glm-5.3",
      "path": "v1/chat/completions",
      "status_code": 429,
      "success": false,
      "cached": false,
      "tokens_in": 10,
      "tokens_out": 0,
      "duration": 3,
      "metadata": "{\"account\":\"acct_2\"}"
    }
  ],
  "result_info": {
    "page": 1,
    "per_page": 50,
    "count": 2,
    "total_count": 2
  },
  "success": true,
  "errors": [],
  "messages": []
}
`

// TestCloudflarePages: a pretty-printed API page (tenant from the metadata
// string), the same page on one line with the export's account, and rows
// one a line.
func TestCloudflarePages(t *testing.T) {
	dir := t.TempDir()
	pretty := writeFile(t, filepath.Join(dir, "page-1.json"), cloudflarePage)
	db := openCase(t)
	res := run(t, db, []string{pretty}, Options{Preset: "cloudflare-aigw", TenantField: "metadata.account"})
	if res.Loaded != 2 || res.Rejected != 0 {
		t.Errorf("pretty page: loaded %d rejected %d", res.Loaded, res.Rejected)
	}
	// Each record at the line its own object starts on (3 and 19); ids are file order.
	want := "cli|cloudflare-aigw|gateway|01J8ZK3V6Q9TQ|-|-|-|2026-09-02T08:14:03.512000Z|2026-09-02T08:14:09.924000Z|acct_4b|glm-5.3|812004|377|-|200|-|-|-|-|3\n" +
		"cli|cloudflare-aigw|gateway|01J8ZK3V6Q9TR|-|-|-|2026-09-02T08:15:00Z|2026-09-02T08:15:00.003000Z|acct_2|glm-5.3|10|0|-|429|-|-|-|-|19\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}

	// The page compacted onto one line, twice (two exports of one page):
	// the second copy's rows are duplicates; the account from the source.
	compact := strings.Join(strings.Fields(strings.ReplaceAll(cloudflarePage, "\n", " ")), " ")
	one := writeFile(t, filepath.Join(dir, "pages.jsonl"), compact+"\n"+compact+"\n")
	db = openCase(t)
	res = run(t, db, []string{one}, Options{Preset: "gateway", Tenant: "acct_export"})
	if res.Read != 4 || res.Loaded != 2 || res.Duplicates != 2 {
		t.Errorf("compact pages: read %d loaded %d dup %d, want 4 2 2", res.Read, res.Loaded, res.Duplicates)
	}
	if n := count(t, db, `SELECT count(*) FROM source_records WHERE tenant_id = 'acct_export' AND line = 1`); n != 2 {
		t.Errorf("compact page rows: %d with the export's account at line 1", n)
	}

	// One row a line (a Logpush-like export of the same rows), a torn last line.
	rows := `{"id":"r1","created_at":"2026-09-02T08:14:03Z","model":"glm-5.3","status_code":200,"tokens_in":5,"tokens_out":1,"duration":1000,"metadata":"{}"}` + "\n" +
		`{"id":"r2","created_at":"2026-09-02T08:14:04Z","model":"glm-5.3","status_c`
	p := writeFile(t, filepath.Join(dir, "rows.jsonl"), rows)
	db = openCase(t)
	res, err := Run(context.Background(), db, nil, []string{p}, Options{Preset: "cloudflare-aigw", Tenant: "acct_9"})
	if !errors.Is(err, ErrDamaged) {
		t.Errorf("a torn last line: err %v, want the file damaged", err)
	}
	if res.Loaded != 1 || res.Rejected != 1 {
		t.Errorf("rows: loaded %d rejected %d", res.Loaded, res.Rejected)
	}
	if n := count(t, db, `SELECT count(*) FROM rejected_rows WHERE line = 2 AND reason = '`+tornLastLine+`: not JSON: truncated'`); n != 1 {
		t.Error("the torn row is not rejected at its line")
	}

	// Without an account: refused whole, saying how to give one.
	_, err = Run(context.Background(), openCase(t), nil, []string{pretty}, Options{Preset: "cloudflare-aigw"})
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "every record lacks tenant_id") || !strings.Contains(err.Error(), "--tenant") {
		t.Errorf("no account: %v", err)
	}
}

// TestPrettyPageToLineLayout: an API page given to a layout that reads one
// record a line is refused whole, naming what the file is and what reads it.
func TestPrettyPageToLineLayout(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "page-1.json"), cloudflarePage)
	for _, o := range []Options{{Preset: "litellm-spendlogs"}, {}} {
		db := openCase(t)
		_, err := Run(context.Background(), db, nil, []string{p}, o)
		if !errors.Is(err, errs.ErrInput) {
			t.Fatalf("%+v: err %v, want an input error", o, err)
		}
		for _, w := range []string{"page-1.json", "not one record per line", "cloudflare-aigw"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "JSON array") || strings.Contains(err.Error(), "\n") {
			t.Errorf("bad wording: %q", err)
		}
		if n := count(t, db, `SELECT (SELECT count(*) FROM ingest_files) + (SELECT count(*) FROM rejected_rows)`); n != 0 {
			t.Errorf("the case changed: %d rows", n)
		}
	}
}

// TestTextLogsNamed: text logs are named for what they are, never "a JSON
// array" or CSV, with what reads them.
func TestTextLogsNamed(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, content, want string }{
		{"glm-p1.log", "[2026-09-02 08:06:44 TP0] max_total_num_tokens=681280, chunked_prefill_size=8192, context_len=1048576\n", "SGLang text log"},
		{"vllm.log", "INFO 09-02 08:14:03 api_server.py:123] Received request ID: cmpl-1, params: ...\n", "vLLM text log"},
	} {
		p := writeFile(t, filepath.Join(dir, tt.name), tt.content)
		for _, o := range []Options{{}, {Preset: "sglang", Role: "decode", Model: "m"}} {
			_, err := Run(context.Background(), openCase(t), nil, []string{p}, o)
			if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "leakmap preflight") ||
				strings.Contains(err.Error(), "JSON array") || strings.Contains(err.Error(), "CSV header") {
				t.Errorf("%s %+v: %v", tt.name, o, err)
			}
		}
	}
}

// TestLiteLLMPayload: StandardLoggingPayload lines, epoch-second floats.
func TestLiteLLMPayload(t *testing.T) {
	ok := `{"id":"chatcmpl-5fda01","trace_id":"t1","call_type":"acompletion","response_cost":0.0,"status":"success","total_tokens":812381,"prompt_tokens":812004,"completion_tokens":377,"startTime":1788336843.512,"endTime":1788336849.901,"completionStartTime":1788336844.2,"model":"glm-5.3","model_id":"a1","model_group":"glm-5.3","api_base":"http://router:30000/v1","metadata":{"user_api_key_hash":"88dc","user_api_key_team_id":"team-acme","user_api_key_alias":null},"cache_hit":null,"end_user":"","messages":[{"role":"user","content":"hello"}],"response":{"id":"chatcmpl-5fda01","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}]},"error_str":null,"error_information":null}`
	failed := `{"id":"chatcmpl-rl0002","call_type":"acompletion","status":"failure","total_tokens":0,"prompt_tokens":10,"completion_tokens":0,"startTime":1788336900.0,"endTime":1788336900.25,"model":"glm-5.3","model_group":null,"metadata":{"user_api_key_team_id":"team-beta"},"messages":[],"response":{},"error_str":"rate limited","error_information":{"error_code":"429","error_class":"RateLimitError","llm_provider":"openai"}}`
	p := writeFile(t, filepath.Join(t.TempDir(), "payloads.jsonl"), ok+"\n"+failed+"\n")
	db := openCase(t)
	run(t, db, []string{p}, Options{Preset: "litellm-payload"})
	want := "cli|litellm-payload|gateway|chatcmpl-5fda01|-|-|-|2026-09-02T08:14:03.512000Z|2026-09-02T08:14:09.901000Z|team-acme|glm-5.3|812004|377|-|200|-|-|hello|Hi.|1\n" +
		"cli|litellm-payload|gateway|chatcmpl-rl0002|-|-|-|2026-09-02T08:15:00Z|2026-09-02T08:15:00.250000Z|team-beta|glm-5.3|10|0|-|429|-|-|-|-|2\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// An OTLP JSON export as a collector's file exporter writes it: one
// ExportTraceServiceRequest a line, spans nested in resourceSpans and
// scopeSpans, attributes as key/value arrays, times as nanosecond strings.
const otlpLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"vllm"}},{"key":"host.name","value":{"stringValue":"gpu-7.dc1.example.com"}}]},"scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[` +
	`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"llm_request","kind":2,"startTimeUnixNano":"1788336843512000000","endTimeUnixNano":"1788336849901000000","attributes":[{"key":"gen_ai.response.model","value":{"stringValue":"glm-5.3"}},{"key":"gen_ai.request.id","value":{"stringValue":"cmpl-1"}},{"key":"gen_ai.response.id","value":{"stringValue":"chatcmpl-5fda01"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"812004"}},{"key":"gen_ai.usage.output_tokens","value":{"intValue":"377"}},{"key":"gen_ai.response.finish_reasons","value":{"arrayValue":{"values":[{"stringValue":"stop"}]}}},{"key":"enduser.id","value":{"stringValue":"acct_4b"}}],"status":{}},` +
	`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"aaa19b7ec3c1b175","name":"llm_request","kind":2,"startTimeUnixNano":"1788336900000000000","endTimeUnixNano":"1788336900250000000","attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"glm-5.3"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"10"}}],"status":{}}` +
	`]}]}]}`

// TestOTLPSpans: nested spans, attribute arrays, nanosecond times; the
// instance from the resource's host.name, the rid the response id else the
// span id, the tenant through tenant_field.
func TestOTLPSpans(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "traces.jsonl"), otlpLine+"\n")
	db := openCase(t)
	res := run(t, db, []string{p}, Options{Preset: "otlp-genai", Role: "engine", TenantField: "enduser.id"})
	if res.Loaded != 2 {
		t.Errorf("loaded %d", res.Loaded)
	}
	want := "cli|otlp-genai|engine|chatcmpl-5fda01|-|-|gpu-7.dc1.example.com|2026-09-02T08:14:03.512000Z|2026-09-02T08:14:09.901000Z|acct_4b|glm-5.3|812004|377|-|-|stop|-|-|-|1\n" +
		"cli|otlp-genai|engine|aaa19b7ec3c1b175|-|-|gpu-7.dc1.example.com|2026-09-02T08:15:00Z|2026-09-02T08:15:00.250000Z|-|glm-5.3|10|-|-|-|-|-|-|-|1\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	// The same export pretty-printed (one document over many lines).
	var b strings.Builder
	indent := 0
	for _, c := range otlpLine {
		switch c {
		case '{', '[':
			indent++
			b.WriteRune(c)
			b.WriteString("\n" + strings.Repeat("  ", indent))
		case '}', ']':
			indent--
			b.WriteString("\n" + strings.Repeat("  ", indent))
			b.WriteRune(c)
		case ',':
			b.WriteString(",\n" + strings.Repeat("  ", indent))
		default:
			b.WriteRune(c)
		}
	}
	p2 := writeFile(t, filepath.Join(t.TempDir(), "traces.json"), b.String()+"\n")
	db = openCase(t)
	run(t, db, []string{p2}, Options{Preset: "otlp-genai", Role: "engine", TenantField: "enduser.id"})
	// Each span at the line its object opens on: the line before its traceId.
	var spanLines []string
	for i, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, `"traceId"`) {
			spanLines = append(spanLines, strconv.Itoa(i))
		}
	}
	if len(spanLines) != 2 {
		t.Fatalf("pretty printer: %d spans", len(spanLines))
	}
	wantPretty := strings.Replace(strings.Replace(want, "|1\n", "|"+spanLines[0]+"\n", 1), "|-|1\n", "|-|"+spanLines[1]+"\n", 1)
	if got := records(t, db); got != wantPretty {
		t.Errorf("pretty-printed: got\n%swant\n%s", got, wantPretty)
	}
}

// TestDocumentRecordLines: a record of a document spread over lines
// (pretty-printed, or one record a line inside a page, or several pages
// in one file) is kept, or rejected, at the line its own object starts
// on, so errors and custody point at it.
func TestDocumentRecordLines(t *testing.T) {
	row := func(id, ts string) string {
		return `{"id": "` + id + `", "created_at": "` + ts + `", "model": "glm-5.3", "status_code": 200, "tokens_in": 5, "tokens_out": 1, "duration": 10, "metadata": "{\"account\": \"acct_1\"}"}`
	}
	// Pretty-printed, the way jq writes it, with a record whose time is bad.
	var pretty strings.Builder
	pretty.WriteString("\n\n{\n  \"result\": [\n")
	for i, ts := range []string{"2026-09-02T08:00:00Z", "not a time", "2026-09-02T08:00:02Z"} {
		if i > 0 {
			pretty.WriteString(",\n")
		}
		pretty.WriteString("    {\n      \"id\": \"p" + strconv.Itoa(i) + "\",\n      \"created_at\": \"" + ts + "\",\n" +
			"      \"model\": \"glm-5.3\",\n      \"status_code\": 200,\n      \"tokens_in\": 5,\n      \"tokens_out\": 1,\n" +
			"      \"duration\": 10,\n      \"metadata\": \"{\\\"account\\\": \\\"acct_1\\\"}\"\n    }")
	}
	pretty.WriteString("\n  ],\n  \"success\": true\n}\n")
	for _, tc := range []struct {
		name, content string
		rows, rejects []int64 // lines, in file order
	}{
		// Two blank lines, then the page: records at lines 5, 15 (rejected), 25.
		{"pretty page", pretty.String(), []int64{5, 25}, []int64{15}},
		{"one record a line in a page", "{\"result\": [\n" + row("a", "2026-09-02T08:00:00Z") + ",\n" +
			row("b", "2026-09-02T08:00:01Z") + "\n], \"success\": true}\n", []int64{2, 3}, nil},
		{"two pages in one file", "{\"result\": [\n" + row("a", "2026-09-02T08:00:00Z") + "]}\n{\n\"result\": [\n\n" +
			row("b", "2026-09-02T08:00:01Z") + ",\n" + row("c", "bad") + "\n]}\n", []int64{2, 6}, []int64{7}},
		{"a record without a page, pretty", "{\n  \"id\": \"x\",\n  \"created_at\": \"2026-09-02T08:00:00Z\", \"model\": \"glm-5.3\",\n" +
			"  \"status_code\": 200, \"tokens_in\": 5, \"tokens_out\": 1, \"metadata\": \"{\\\"account\\\": \\\"acct_1\\\"}\"\n}\n", []int64{1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), "page.json"), tc.content)
			db := openCase(t)
			res := run(t, db, []string{p}, Options{Preset: "cloudflare-aigw", TenantField: "metadata.account"})
			if res.Loaded != int64(len(tc.rows)) || res.Rejected != int64(len(tc.rejects)) {
				t.Errorf("loaded %d rejected %d, want %d %d", res.Loaded, res.Rejected, len(tc.rows), len(tc.rejects))
			}
			if got := lines(t, db, `SELECT line FROM source_records ORDER BY record_id`); !slices.Equal(got, tc.rows) {
				t.Errorf("record lines %v, want %v", got, tc.rows)
			}
			if got := lines(t, db, `SELECT line FROM rejected_rows ORDER BY line`); !slices.Equal(got, tc.rejects) {
				t.Errorf("rejected lines %v, want %v", got, tc.rejects)
			}
		})
	}
}

func lines(t *testing.T, db *sql.DB, q string) []int64 {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
