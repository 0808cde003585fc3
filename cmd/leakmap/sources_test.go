package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIncidentSources: with no LOG argument, ingest --incident and run load
// the incident file's sources; LOG arguments replace them, and run says so.
func TestIncidentSources(t *testing.T) {
	dir := t.TempDir()
	example := filepath.Join("..", "..", "docs", "example")
	inc, err := os.ReadFile(filepath.Join(example, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("gateway/spendlogs.csv", "request_id,startTime,endTime,model,model_group,team_id,prompt_tokens,completion_tokens,status,metadata\n"+
		`chatcmpl-d1,2026-09-02 10:00:00.000,2026-09-02 10:00:02.000,example-1,example-1,acme,3000,20,success,"{""user_api_key_team_id"": ""acme""}"`+"\n")
	write("engine/decode/dec-1_0.log.2026-09-02_10",
		`{"timestamp": "2026-09-02T10:00:00.100000", "event": "request.received", "rid": "chatcmpl-d1", "obj": {"rid": "chatcmpl-d1", "bootstrap_room": 7, "custom_labels": null}}`+"\n"+
			`{"timestamp": "2026-09-02T10:00:01.900000", "event": "request.finished", "rid": "chatcmpl-d1", "obj": {"rid": "chatcmpl-d1", "bootstrap_room": 7}, "out": {"meta_info": {"id": "chatcmpl-d1", "finish_reason": {"type": "stop", "matched": 2}, "prompt_tokens": 3000, "completion_tokens": 20, "cached_tokens": 0, "e2e_latency": 1.8}}}`+"\n")
	incPath := write("incident.yaml", string(inc)+`sources:
  - layout: litellm-spendlogs
    paths: [gateway/*.csv]
  - layout: sglang
    role: decode
    model: example-1
    paths: [engine/decode]
`)
	db := filepath.Join(dir, "case.duckdb")
	code, out, errOut := runCLI(t, "ingest", "--db", db, "--incident", incPath)
	if code != 0 {
		t.Fatalf("ingest --incident: exit %d: %s", code, errOut)
	}
	for _, w := range []string{"spendlogs.csv: csv/none (litellm-spendlogs gateway, sources[0]), read 1, loaded 1",
		"dec-1_0.log.2026-09-02_10: jsonl/none (sglang decode, sources[1]), read 1, loaded 1", "read 2, loaded 2"} {
		if !strings.Contains(out, w) {
			t.Errorf("ingest output lacks %q:\n%s", w, out)
		}
	}
	// Flags of LOG arguments without LOG arguments: a usage error.
	if code, _, errOut := runCLI(t, "ingest", "--db", db, "--incident", incPath, "--role", "decode"); code != 2 || !strings.Contains(errOut, "--role applies to LOG arguments") {
		t.Errorf("--role without LOG: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "ingest", "--db", db); code != 2 || !strings.Contains(errOut, "--incident") {
		t.Errorf("no LOG, no incident: exit %d: %s", code, errOut)
	}
	tenants := filepath.Join(example, "tenants.csv")
	code, out, errOut = runCLI(t, "-q", "run", "--incident", incPath, "--tenants", tenants, "--out", filepath.Join(dir, "out"))
	if code != 0 || !strings.Contains(out, "(sglang decode, sources[1])") {
		t.Errorf("run with sources: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "-q", "run", "--incident", incPath, "--tenants", tenants, "--out", filepath.Join(dir, "out2"), filepath.Join(example, "logs"))
	if code != 0 || !strings.Contains(errOut, "LOG arguments given: the incident file's 2 sources are not loaded") || strings.Contains(out, "sources[") {
		t.Errorf("run with LOG arguments: exit %d\n%s\n%s", code, out, errOut)
	}
}
