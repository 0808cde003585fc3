package ingest

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/ingest/layouts"
)

// records returns source_records as lines, ordered by record_id.
func records(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT source, layout, role, coalesce(rid, '-'), coalesce(bootstrap_room::VARCHAR, '-'),
	    coalesce(bootstrap_host, '-'), coalesce(instance, '-'), coalesce(rfc3339(ts), '-'), coalesce(rfc3339(end_ts), '-'),
	    coalesce(tenant_id, '-'), coalesce(model, '-'), coalesce(prompt_tokens::VARCHAR, '-'),
	    coalesce(completion_tokens::VARCHAR, '-'), coalesce(cached_tokens::VARCHAR, '-'), coalesce(status::VARCHAR, '-'),
	    coalesce(finish_type, '-'), coalesce(finish_message, '-'), coalesce(prompt_text, '-'), coalesce(response_text, '-'),
	    line::VARCHAR
	    FROM source_records ORDER BY record_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		v := make([]string, 20)
		p := make([]any, 20)
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Join(v, "|") + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEveryLayoutCompiles: each embedded layout, under each role it takes.
func TestEveryLayoutCompiles(t *testing.T) {
	names := layouts.Names()
	for _, want := range []string{"canonical", "sglang", "litellm-spendlogs", "litellm-payload", "cloudflare-aigw", "otlp-genai"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("no layout %s", want)
		}
	}
	for _, n := range append(names, "engine", "gateway") {
		f, err := layouts.Get(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		roles := f.Roles
		if len(roles) == 0 {
			roles = []string{f.DefaultRole()}
		}
		for _, r := range roles {
			if _, err := compileMapping(f, SourceKeys{Role: r, Model: "m", Label: "cli"}); err != nil {
				t.Errorf("%s as %s: %v", n, r, err)
			}
		}
		if f.Description == "" {
			t.Errorf("%s: no description", n)
		}
	}
	if f, _ := layouts.Get("engine"); f.Name() != "sglang" {
		t.Errorf("engine is %s, want an alias of sglang", f.Name())
	}
	if f, _ := layouts.Get("gateway"); f.Name() != "cloudflare-aigw" {
		t.Errorf("gateway is %s, want an alias of cloudflare-aigw", f.Name())
	}
}

// sglangObj is a GenerateReqInput as request_logger.py logs it at levels 0
// and 1 (text, input_ids and media skipped; sampling_params kept from
// level 1), fields in the dataclass's order, nulls kept.
func sglangObj(rid string, room int64, level int, text string) string {
	var b strings.Builder
	b.WriteString(`{`)
	if level >= 2 {
		b.WriteString(`"text": ` + quote(text) + `, "input_ids": null, "input_embeds": null, "image_data": null, "audio_data": null, `)
	}
	if level >= 1 {
		b.WriteString(`"sampling_params": {"max_new_tokens": 512, "temperature": 0.6}, `)
	}
	b.WriteString(`"rid": "` + rid + `", "return_logprob": false, "logprob_start_len": -1, "top_logprobs_num": 0, "stream": true, "log_metrics": true, "modalities": null`)
	if level >= 2 {
		b.WriteString(`, "lora_path": null`)
	}
	b.WriteString(`, "custom_logit_processor": null, "bootstrap_host": "10.0.3.7", "bootstrap_port": 8998, "bootstrap_room": ` + itoa(room) + `, "bootstrap_pair_key": null, "data_parallel_rank": null, "custom_labels": {"tenant": "acct_` + rid[len(rid)-2:] + `"}, "routing_key": null}`)
	return b.String()
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

func sglangReceived(ts, rid string, room int64, level int, text string) string {
	return `{"timestamp": "` + ts + `", "event": "request.received", "rid": "` + rid + `", "obj": ` + sglangObj(rid, room, level, text) + `}`
}

func sglangFinished(ts, rid string, room int64, level int, text, out, meta string) string {
	o := `{"meta_info": ` + meta + `}`
	if level >= 2 {
		o = `{"text": ` + quote(out) + `, "output_ids": [151329, 13], "meta_info": ` + meta + `}`
	}
	return `{"timestamp": "` + ts + `", "event": "request.finished", "rid": "` + rid + `", "obj": ` + sglangObj(rid, room, level, text) + `, "out": ` + o + `}`
}

func stopMeta(rid string, prompt, completion int, latency string) string {
	return `{"id": "` + rid + `", "finish_reason": {"type": "stop", "matched": 151329}, "prompt_tokens": ` + fmtInt(int64(prompt)) +
		`, "completion_tokens": ` + fmtInt(int64(completion)) + `, "cached_tokens": 0, "e2e_latency": ` + latency + `, "weight_version": "default", "num_retractions": 0}`
}

const abortMsg = "Input length (812004 tokens) exceeds the maximum allowed length (681279 tokens). Use a shorter input or enable --allow-auto-truncate."

// TestSGLangDecodeLevel0: a gzipped hourly part of a decode host with a
// dotted name, level 0 (no texts), times in the host's zone; a pair, a line
// shipped twice, a request whose finished event is in the next part, one
// whose received event was in the previous part, a torn last line.
func TestSGLangDecodeLevel0(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		sglangReceived("2026-09-02T10:14:03.512345", "chatcmpl-5fda01", 51122093, 0, ""),
		sglangFinished("2026-09-02T10:14:09.880112", "chatcmpl-5fda01", 51122093, 0, "", "", stopMeta("chatcmpl-5fda01", 812004, 377, "6.367767")),
		sglangFinished("2026-09-02T10:14:09.880112", "chatcmpl-5fda01", 51122093, 0, "", "", stopMeta("chatcmpl-5fda01", 812004, 377, "6.367767")),
		sglangFinished("2026-09-02T10:00:01.5", "chatcmpl-0ld002", 7, 0, "", "", stopMeta("chatcmpl-0ld002", 1200, 30, "2.5")),
		sglangReceived("2026-09-02T10:59:59.000001", "chatcmpl-late03", 99, 0, ""),
		`{"timestamp": "2026-09-02T10:59:59.9", "event": "request.fini`,
	}
	p := writeFile(t, filepath.Join(dir, "decode", "glm-d3.dc1.example.com_0.log.2026-09-02_08.gz"), strings.Join(lines, "\n")+"\n")
	db := openCase(t)
	res := run(t, db, []string{p}, Options{Preset: "sglang", Role: "decode", Model: "glm-5.3", Timezone: "Europe/Paris"})
	if res.Read != 5 || res.Loaded != 3 || res.Rejected != 1 || res.Duplicates != 1 {
		t.Errorf("read %d loaded %d rejected %d dup %d, want 5 3 1 1", res.Read, res.Loaded, res.Rejected, res.Duplicates)
	}
	want := "cli|sglang|decode|chatcmpl-5fda01|51122093|10.0.3.7|glm-d3.dc1.example.com|2026-09-02T08:14:03.512345Z|2026-09-02T08:14:09.880112Z|-|glm-5.3|812004|377|0|-|stop|-|-|-|2\n" +
		"cli|sglang|decode|chatcmpl-0ld002|7|10.0.3.7|glm-d3.dc1.example.com|2026-09-02T07:59:59Z|2026-09-02T08:00:01.500000Z|-|glm-5.3|1200|30|0|-|stop|-|-|-|4\n" +
		"cli|sglang|decode|chatcmpl-late03|99|10.0.3.7|glm-d3.dc1.example.com|2026-09-02T08:59:59.000001Z|-|-|glm-5.3|-|-|-|-|-|-|-|-|5\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if n := count(t, db, `SELECT count(*) FROM rejected_rows WHERE line = 6 AND reason = 'not JSON: truncated'`); n != 1 {
		t.Error("the torn last line is not rejected at its line")
	}
	if n := count(t, db, `SELECT count(*) FROM ingest_files WHERE preset = 'sglang' AND rows_read = 5 AND length(sha256) = 64`); n != 1 {
		t.Error("no custody row for the file")
	}
	if n := count(t, db, `SELECT count(*) FROM requests r WHERE NOT EXISTS (SELECT 1 FROM request_sources j WHERE j.row_id = r.row_id)`); n != 0 {
		t.Errorf("%d engine records went into requests other than through the join", n)
	}
	// The same bytes again: skipped whole. The pair shipped again in the
	// next part: a duplicate of the record already in the case.
	res = run(t, db, []string{p}, Options{Preset: "sglang", Role: "decode", Model: "glm-5.3", Timezone: "Europe/Paris"})
	if !res.Files[0].AlreadyLoaded {
		t.Error("the same file loaded twice")
	}
	next := writeFile(t, filepath.Join(dir, "decode", "glm-d3.dc1.example.com_0.log.2026-09-02_09"), strings.Join(lines[:2], "\n")+"\n")
	res = run(t, db, []string{next}, Options{Preset: "sglang", Role: "decode", Model: "glm-5.3", Timezone: "Europe/Paris"})
	if res.Read != 1 || res.Duplicates != 1 || res.Loaded != 0 {
		t.Errorf("next part: read %d dup %d loaded %d, want 1 1 0", res.Read, res.Duplicates, res.Loaded)
	}
}

// TestSGLangPrefillLevel3: level 3 keeps the texts; the prefill record of a
// cut prompt (the bug's fingerprint) keeps its abort's type, message and
// status; the tenant comes from custom_labels.
func TestSGLangPrefillLevel3(t *testing.T) {
	dir := t.TempDir()
	abort := `{"id": "chatcmpl-c0ffee", "finish_reason": {"type": "abort", "message": "` + abortMsg + `", "status_code": 400, "err_type": "BadRequestError"}, "prompt_tokens": 1, "completion_tokens": 0, "cached_tokens": 0, "e2e_latency": 0.004, "weight_version": "default", "num_retractions": 0}`
	lines := []string{
		sglangReceived("2026-09-02T08:06:44.100000", "chatcmpl-c0ffee", 51122093, 3, "Summarise: \"the contract\"\nline two"),
		sglangFinished("2026-09-02T08:06:44.104000", "chatcmpl-c0ffee", 51122093, 3, "Summarise: \"the contract\"\nline two", "", abort),
		sglangReceived("2026-09-02T08:07:00", "chatcmpl-beef07", 42, 3, "hello"),
		sglangFinished("2026-09-02T08:07:01", "chatcmpl-beef07", 42, 3, "hello", "Hi there.", stopMeta("chatcmpl-beef07", 3, 4, "1.0")),
	}
	p := writeFile(t, filepath.Join(dir, "glm-p1_2.log"), strings.Join(lines, "\n")+"\n")
	db := openCase(t)
	run(t, db, []string{p}, Options{Preset: "sglang", Role: "prefill", Model: "glm-5.3", TenantField: "custom_labels.tenant"})
	want := "cli|sglang|prefill|chatcmpl-c0ffee|51122093|10.0.3.7|glm-p1|2026-09-02T08:06:44.100000Z|2026-09-02T08:06:44.104000Z|acct_ee|glm-5.3|1|0|0|400|abort|" + abortMsg + "|Summarise: \"the contract\"\nline two|-|2\n" +
		"cli|sglang|prefill|chatcmpl-beef07|42|10.0.3.7|glm-p1|2026-09-02T08:07:00Z|2026-09-02T08:07:01Z|acct_07|glm-5.3|3|4|0|-|stop|-|hello|Hi there.|4\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// A psql \copy ... CSV HEADER export of LiteLLM_SpendLogs: NULL is an empty
// cell, JSON columns are JSON text in quoted cells, times have no zone.
const spendLogsCSV = `request_id,call_type,api_key,spend,total_tokens,prompt_tokens,completion_tokens,startTime,endTime,completionStartTime,model,model_id,model_group,custom_llm_provider,api_base,user,metadata,cache_hit,cache_key,request_tags,team_id,organization_id,end_user,requester_ip_address,messages,response,session_id,status,proxy_server_request
chatcmpl-5fda01,acompletion,88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b,0.0,812381,812004,377,2026-09-02 08:14:03.512,2026-09-02 08:14:09.901,2026-09-02 08:14:04.2,openai/glm-5.3,a1b2,glm-5.3,openai,http://sglang-router:30000/v1,,"{""user_api_key_alias"": ""acme-prod"", ""user_api_key_team_id"": ""team-acme"", ""error_information"": null}",False,,[],team-acme,,,10.1.2.3,"[{""role"": ""user"", ""content"": ""Summarise, please:\nthe contract""}]","{""id"": ""chatcmpl-5fda01"", ""choices"": [{""index"": 0, ""message"": {""role"": ""assistant"", ""content"": ""It says \""no\"".""}, ""finish_reason"": ""stop""}], ""usage"": {""prompt_tokens"": 812004, ""completion_tokens"": 377, ""prompt_tokens_details"": {""cached_tokens"": 0}}}",,success,{}
chatcmpl-rl0002,acompletion,88dc,0.0,10,10,0,2026-09-02 08:15:00.000,2026-09-02 08:15:00.020,,openai/glm-5.3,a1b2,,openai,,,"{""user_api_key_team_id"": ""team-beta"", ""error_information"": {""error_code"": ""429"", ""error_class"": ""RateLimitError"", ""llm_provider"": ""openai""}}",False,,[],team-beta,,,,{},{},,failure,{}
chatcmpl-er0003,acompletion,88dc,0.0,10,10,0,2026-09-02 08:16:00.000,2026-09-02 08:16:00.020,,openai/glm-5.3,a1b2,glm-5.3,openai,,,{},False,,[],team-beta,,,,{},{},,failure,{}
`

// TestLiteLLMSpendLogsCSV: status from success/failure and the error code
// in metadata; model from model_group, else model; texts from the JSON cells.
func TestLiteLLMSpendLogsCSV(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "spendlogs.csv.gz"), spendLogsCSV)
	db := openCase(t)
	res := run(t, db, []string{p}, Options{Preset: "litellm-spendlogs"})
	if res.Loaded != 3 || res.Rejected != 0 || res.Files[0].Role != "gateway" {
		t.Errorf("loaded %d rejected %d role %q", res.Loaded, res.Rejected, res.Files[0].Role)
	}
	want := "cli|litellm-spendlogs|gateway|chatcmpl-5fda01|-|-|-|2026-09-02T08:14:03.512000Z|2026-09-02T08:14:09.901000Z|team-acme|glm-5.3|812004|377|0|200|-|-|Summarise, please:\nthe contract|It says \"no\".|2\n" +
		"cli|litellm-spendlogs|gateway|chatcmpl-rl0002|-|-|-|2026-09-02T08:15:00Z|2026-09-02T08:15:00.020000Z|team-beta|openai/glm-5.3|10|0|-|429|-|-|-|-|3\n" +
		"cli|litellm-spendlogs|gateway|chatcmpl-er0003|-|-|-|2026-09-02T08:16:00Z|2026-09-02T08:16:00.020000Z|team-beta|glm-5.3|10|0|-|500|-|-|-|-|4\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	// The tenant from another field, inside the metadata cell's JSON.
	db = openCase(t)
	run(t, db, []string{p}, Options{Preset: "litellm-spendlogs", TenantField: "metadata.user_api_key_alias"})
	if n := count(t, db, `SELECT count(*) FROM source_records WHERE tenant_id = 'acme-prod'`); n != 1 {
		t.Errorf("tenant_field into a JSON cell: %d rows", n)
	}
}

// TestLiteLLMSpendLogsJSONL: the same table as JSON Lines (row_to_json):
// JSON columns are objects, times have a T.
func TestLiteLLMSpendLogsJSONL(t *testing.T) {
	line := `{"request_id":"chatcmpl-5fda01","call_type":"acompletion","api_key":"88dc","spend":0.0,"total_tokens":812381,"prompt_tokens":812004,"completion_tokens":377,"startTime":"2026-09-02T08:14:03.512","endTime":"2026-09-02T08:14:09.901","completionStartTime":null,"model":"openai/glm-5.3","model_id":"a1b2","model_group":"glm-5.3","custom_llm_provider":"openai","api_base":"","user":"","metadata":{"user_api_key_team_id":"team-acme"},"cache_hit":"False","cache_key":"","request_tags":[],"team_id":"team-acme","organization_id":null,"end_user":"","requester_ip_address":"","messages":{},"response":{},"session_id":null,"status":"success","proxy_server_request":{}}`
	p := writeFile(t, filepath.Join(t.TempDir(), "spendlogs.jsonl"), line+"\n")
	db := openCase(t)
	run(t, db, []string{p}, Options{Preset: "litellm-spendlogs"})
	want := "cli|litellm-spendlogs|gateway|chatcmpl-5fda01|-|-|-|2026-09-02T08:14:03.512000Z|2026-09-02T08:14:09.901000Z|team-acme|glm-5.3|812004|377|-|200|-|-|-|-|1\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// TestJSONInCellNotReached: a mapping whose tenant is a key inside the
// metadata cell's JSON, named as a column: refused whole, naming the file,
// the field and the path that reaches it; nothing loaded.
func TestJSONInCellNotReached(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, filepath.Join(dir, "team.yaml"), "extends: litellm-spendlogs\nfields:\n  tenant_id: user_api_key_alias\n")
	p := writeFile(t, filepath.Join(dir, "spendlogs.csv"), strings.Split(spendLogsCSV, "\nchatcmpl-rl0002")[0]+"\n")
	db := openCase(t)
	_, err := Run(context.Background(), db, nil, []string{p}, Options{MappingFile: m})
	if !errors.Is(err, errs.ErrInput) {
		t.Fatalf("err %v, want an input error", err)
	}
	for _, w := range []string{"spendlogs.csv", "every record lacks tenant_id", "metadata.user_api_key_alias"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	if n := count(t, db, `SELECT (SELECT count(*) FROM ingest_files) + (SELECT count(*) FROM source_records) + (SELECT count(*) FROM rejected_rows)`); n != 0 {
		t.Errorf("the case changed: %d rows", n)
	}
}

// TestSGLangSplitAcrossParts: a request received at the end of one hourly
// part and finished in the next is two records, each counted in its file
// (the finished half starts e2e_latency before it ended); the join makes
// them one request.
func TestSGLangSplitAcrossParts(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, filepath.Join(dir, "glm-d1_0.log.2026-09-02_08"),
		sglangReceived("2026-09-02T08:59:58.000000", "chatcmpl-span01", 5, 0, "")+"\n")
	b := writeFile(t, filepath.Join(dir, "glm-d1_0.log.2026-09-02_09.gz"),
		sglangFinished("2026-09-02T09:00:04.000000", "chatcmpl-span01", 5, 0, "", "", stopMeta("chatcmpl-span01", 900, 7, "5.5"))+"\n")
	db := openCase(t)
	res := run(t, db, []string{a, b}, Options{Preset: "sglang", Role: "decode", Model: "glm-5.3"})
	if res.Loaded != 2 {
		t.Fatalf("loaded %d, want both halves", res.Loaded)
	}
	want := "cli|sglang|decode|chatcmpl-span01|5|10.0.3.7|glm-d1|2026-09-02T08:59:58Z|-|-|glm-5.3|-|-|-|-|-|-|-|-|1\n" +
		"cli|sglang|decode|chatcmpl-span01|5|10.0.3.7|glm-d1|2026-09-02T08:59:58.500000Z|2026-09-02T09:00:04Z|-|glm-5.3|900|7|0|-|stop|-|-|-|1\n"
	if got := records(t, db); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if n := count(t, db, `SELECT count(*) FROM requests`); n != 1 {
		t.Errorf("%d requests, want one for the call", n)
	}
	if n := count(t, db, `SELECT count(*) FROM request_sources`); n != 2 {
		t.Errorf("%d request_sources rows, want both halves", n)
	}
}
