package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	pfArgs   = "[2026-08-26 22:58:10] server_args=ServerArgs(model_path='zai-org/GLM-5.3', tp_size=1, disaggregation_mode='%s', context_length=None)\n"
	pfKV     = "[2026-08-26 22:59:41] KV Cache is allocated. #tokens: %s, K size: 11.69 GB, V size: 11.69 GB\n"
	pfPool   = "[2026-08-26 22:59:58] max_total_num_tokens=%s, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=128, context_len=1048576, available_gpu_mem=11.52 GB\n"
	pfTraffc = "[2026-09-02 08:06:40] Prefill batch. #new-seq: 1, #new-token: 8192, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0, \n"
)

func startupLog(mode, pool string) string {
	return fmt.Sprintf(pfArgs, mode) + fmt.Sprintf(pfKV, pool) + fmt.Sprintf(pfPool, pool) + pfTraffc
}

func writeLogs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The exit codes a deploy pipeline relies on: 0 (pool holds the context),
// 5 (a pool below its context, even beside an unreadable line), 3 (no
// start-up line at all, or one that cannot be read).
func TestPreflightExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    int
		stdout  []string
		stderr  []string
		outputs bool
	}{
		{"ok", map[string]string{"glm-p0_0.log": startupLog("prefill", "2040000"), "glm-d0_0.log": startupLog("decode", "3200000")}, 0,
			[]string{"glm-p0", "2,040,000", "1,048,576", "ok", "findings: 0"}, nil, true},
		{"finding", map[string]string{"glm-p0_0.log": startupLog("prefill", "681280"), "glm-d0_0.log": startupLog("decode", "3200000")}, 5,
			[]string{"POOL BELOW CONTEXT (367,296 tokens short)", "findings: 1"}, []string{"glm-p0 (prefill) pool 681280 < context 1048576"}, true},
		{"finding wins over an unreadable line", map[string]string{"glm-p0_0.log": startupLog("prefill", "681280") + "[2026-08-27 00:00:00] max_total_num_tokens=12\n"}, 5,
			nil, []string{"glm-p0_0.log:5: max_total_num_tokens line", "1 start-up line(s) could not be read"}, true},
		{"unreadable line", map[string]string{"glm-p0_0.log": startupLog("prefill", "2040000") + "[2026-08-27 00:00:00] max_total_num_tokens=x, context_len=1\n"}, 3,
			nil, []string{"glm-p0_0.log:5:"}, true},
		{"no start-up line", map[string]string{"glm-p0_0.log": pfTraffc}, 3,
			nil, []string{"no start-up line found in 1 file(s), 1 line(s); looked for SGLang's", "GPU KV cache size"}, false},
		{"role never stated", map[string]string{"glm-x_0.log": fmt.Sprintf(pfPool, "2040000")}, 0,
			nil, []string{"glm-x: role never stated"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeLogs(t, tt.files)
			out := filepath.Join(t.TempDir(), "pf")
			code, stdout, stderr := runCLI(t, "preflight", "--out", out, dir)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			_, err := os.Stat(filepath.Join(out, "capacity.csv"))
			if got := err == nil; got != tt.outputs {
				t.Errorf("capacity.csv written: %t, want %t", got, tt.outputs)
			}
		})
	}
}

func TestPreflightFlags(t *testing.T) {
	dir := writeLogs(t, map[string]string{"server.txt": startupLog("decode", "3200000")})
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "preflight", "--out", out, dir); code != 2 || !strings.Contains(stderr, "--instance") {
		t.Errorf("no host in the name: exit %d, want 2 asking for --instance: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "preflight", "--out", out, "--timezone", "Mars/Olympus", dir); code != 2 {
		t.Errorf("bad zone: exit %d, want 2: %s", code, stderr)
	}
	code, _, stderr := runCLI(t, "preflight", "--out", out, "--instance", "gpu-7", "--timezone", "+02:00", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "capacity.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "instance,role,pool_tokens,valid_from\ngpu-7,decode,3200000,2026-08-26T20:59:58Z\n"; string(b) != want {
		t.Errorf("capacity.csv:\n%s\nwant:\n%s", b, want)
	}
	code, stdout, _ := runCLI(t, "preflight", "--help")
	if code != 0 || !strings.Contains(stdout, "5  preflight found") {
		t.Errorf("preflight --help (exit %d) does not list exit status 5:\n%s", code, stdout)
	}
}

// run --timeline replaces the incident file's timeline; a bad one is a
// usage error naming the flag, before anything is loaded.
func TestRunTimelineFlag(t *testing.T) {
	example := filepath.Join("..", "..", "docs", "example")
	bad := filepath.Join(t.TempDir(), "capacity.csv")
	if err := os.WriteFile(bad, []byte("instance,role,pool_tokens,valid_from\npf-0,prefill,lots,2026-08-27T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "-q", "run", "--incident", filepath.Join(example, "incident.yaml"), "--tenants", filepath.Join(example, "tenants.csv"),
		"--out", out, "--timeline", bad, filepath.Join(example, "logs"))
	if code != 2 || !strings.Contains(stderr, "--timeline: capacity.csv:2: pool_tokens") {
		t.Errorf("exit %d, want 2 naming --timeline and the line: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "case.duckdb")); err == nil {
		t.Error("the case was created before the timeline was read")
	}
}
