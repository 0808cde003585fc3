package preflight

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
)

// testdata/ holds text logs written the way SGLang and vLLM write them
// (illustrations made for this project, not captures): TP ranks repeating
// lines, restarts across a rotated .gz part, interleaved traffic and error
// lines, several versions of the scheduler line, vLLM V1 and V0 formats, a
// year boundary, and lines that cannot be read.

func readTestdata(t *testing.T, opts Options) *Result {
	t.Helper()
	if opts.Year == 0 {
		opts.Year = 2026
	}
	res, err := Read(context.Background(), nil, []string{"testdata"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCapacityTimeline(t *testing.T) {
	res := readTestdata(t, Options{})
	want := `instance,role,pool_tokens,valid_from
glm-d0,decode,3200000,2026-08-26T22:58:20Z
glm-p0,prefill,681280,2026-08-26T22:59:58Z
glm-p0,prefill,2040000,2026-09-09T19:40:00Z
kv-0,decode,700000,2026-08-21T10:00:40Z
mix-0,decode,500000,2026-08-20T09:01:30Z
mix-0,prefill,500000,2026-08-20T09:01:30Z
vllm-d1,decode,94320,2026-08-26T22:51:40Z
vllm-old,decode,200000,2026-12-31T23:59:30Z
vllm-old,prefill,200000,2026-12-31T23:59:30Z
`
	if got := string(res.CapacityCSV()); got != want {
		t.Errorf("capacity.csv:\n%s\nwant:\n%s", got, want)
	}
}

func TestFindings(t *testing.T) {
	res := readTestdata(t, Options{})
	// glm-p0: 681,280 under 1,048,576 until the restart; two inputs refused
	// (one logged twice, TP1-3 repeating it), the one after the fix not
	// counted. kv-0: the pool from the KV Cache line, the context from
	// server_args. lost-0: role never stated. vllm-d1: DP0's numbers.
	want := `instance,role,pool_tokens,context_tokens,valid_from,valid_until,finding,cut_inputs
glm-p0,prefill,681280,1048576,2026-08-26T22:59:58Z,2026-09-09T19:40:00Z,pool_below_context,2
kv-0,decode,700000,1048576,2026-08-21T10:00:40Z,,pool_below_context,0
lost-0,unknown,400000,1048576,2026-08-28T03:00:09Z,,pool_below_context,1
vllm-d1,decode,94320,131072,2026-08-26T22:51:40Z,,pool_below_context,0
`
	if got := string(res.FindingsCSV()); got != want {
		t.Errorf("findings.csv:\n%s\nwant:\n%s", got, want)
	}
	if got, want := res.UnknownRole, []string{"lost-0", "old-0"}; !slices.Equal(got, want) {
		t.Errorf("unknown role: %v, want %v", got, want)
	}
	if len(res.Unchecked) != 1 || res.Unchecked[0].Instance != "old-0" || res.Unchecked[0].Pool != 300000 {
		t.Errorf("unchecked: %+v, want old-0's start only", res.Unchecked)
	}
}

func TestStarts(t *testing.T) {
	res := readTestdata(t, Options{})
	type key struct {
		inst  string
		from  string
		until string
		cut   int64
		model string
	}
	var got []key
	for _, s := range res.Starts {
		u := ""
		if !s.Until.IsZero() {
			u = incident.FormatTime(s.Until)
		}
		got = append(got, key{s.Instance, incident.FormatTime(s.From), u, s.Cut, s.Model})
	}
	want := []key{
		{"glm-d0", "2026-08-26T22:58:20Z", "", 0, "zai-org/GLM-5.3"},
		{"glm-p0", "2026-08-26T22:59:58Z", "2026-09-09T19:40:00Z", 2, "zai-org/GLM-5.3"},
		{"glm-p0", "2026-09-09T19:40:00Z", "", 1, "zai-org/GLM-5.3"},
		{"kv-0", "2026-08-21T10:00:40Z", "", 0, "zai-org/GLM-5.3"},
		{"lost-0", "2026-08-28T03:00:09Z", "", 1, ""},
		{"mix-0", "2026-08-20T09:01:30Z", "", 0, "zai-org/GLM-5.3"},
		{"old-0", "2026-08-20T09:01:30Z", "", 0, "zai-org/GLM-5.3"},
		{"vllm-d1", "2026-08-26T22:51:40Z", "", 0, ""},
		// The V0 restart after New Year logs no pool in tokens: the first
		// start ends there, and nothing is guessed for the second.
		{"vllm-old", "2026-12-31T23:59:30Z", "2027-01-01T00:10:00Z", 0, ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("starts:\n%v\nwant:\n%v", got, want)
	}
}

func TestProblemsNameFileAndLine(t *testing.T) {
	res := readTestdata(t, Options{})
	var got []string
	for _, p := range res.Problems {
		got = append(got, filepath.Base(p.File)+":"+itoa(p.Line))
	}
	want := []string{"bad-0.log:1", "bad-0.log:2", "bad-0.log:3", "bad-0.log:4", "bad-0.log:5", "bad-0.log:6", "vllm-old.log:6"}
	if !slices.Equal(got, want) {
		t.Errorf("problems at %v, want %v\n%v", got, want, res.Problems)
	}
	reasons := map[string]string{
		"bad-0.log:1":    "cut off",
		"bad-0.log:2":    `"abc" is not a positive number`,
		"bad-0.log:3":    "without a time",
		"bad-0.log:4":    "nothing after max_total_num_tokens",
		"bad-0.log:5":    "disaggregation_mode='encode'",
		"bad-0.log:6":    "#tokens",
		"vllm-old.log:6": "GPU blocks",
	}
	for _, p := range res.Problems {
		at := filepath.Base(p.File) + ":" + itoa(p.Line)
		if !strings.Contains(p.Reason, reasons[at]) {
			t.Errorf("%s: reason %q lacks %q", at, p.Reason, reasons[at])
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The timeline preflight writes is the incident file's: package incident
// loads it, and the pools it gives are the engines' own.
func TestTimelineLoadsAsIncidentTimeline(t *testing.T) {
	res := readTestdata(t, Options{})
	dir := t.TempDir()
	capPath, _, err := res.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	yaml := `id: T
title: t
models: [glm-5.3]
window: {start: 2026-08-27T00:00:00Z, end: 2026-09-09T14:00:00Z}
discovered_at: 2026-09-08T23:11:00Z
aware_at: 2026-09-09T10:00:00Z
capacity:
  max_context_tokens: 1048576
  prefill_pool_tokens: 1
  decode_pool_tokens: 2
  timeline: capacity.csv
provider: {name: P, email: p@example.com, country: FR}
`
	incPath := filepath.Join(dir, "incident.yaml")
	if err := os.WriteFile(incPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(incPath)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Capacity.TimelinePath != capPath || len(inc.Capacity.Timeline) != len(res.Timeline) {
		t.Fatalf("timeline %s with %d rows, want %s with %d", inc.Capacity.TimelinePath, len(inc.Capacity.Timeline), capPath, len(res.Timeline))
	}
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	for _, c := range []struct {
		inst, role, at string
		want           int64
	}{
		{"glm-p0", "prefill", "2026-09-02T08:06:44Z", 681280},
		{"glm-p0", "prefill", "2026-09-09T19:39:59Z", 681280},
		{"glm-p0", "prefill", "2026-09-09T19:40:00Z", 2040000},
		{"glm-p0", "prefill", "2026-08-26T22:59:57Z", 1}, // before its first start: the default
		{"mix-0", "decode", "2026-08-21T00:00:00Z", 500000},
		{"mix-0", "prefill", "2026-08-21T00:00:00Z", 500000},
		{"lost-0", "prefill", "2026-08-29T00:00:00Z", 1}, // role never stated: not in the timeline
	} {
		if got := inc.Capacity.PoolAt(c.inst, c.role, at(c.at)); got != c.want {
			t.Errorf("PoolAt(%s, %s, %s) = %d, want %d", c.inst, c.role, c.at, got, c.want)
		}
	}
}

func TestTimezoneAndInstance(t *testing.T) {
	dir := t.TempDir()
	log := "[2026-08-26 22:58:10] server_args=ServerArgs(model_path='m', disaggregation_mode='decode')\n" +
		"[2026-08-26 22:59:58] max_total_num_tokens=1000, max_prefill_tokens=16384, max_running_requests=8, context_len=500, available_gpu_mem=1.00 GB\n"
	if err := os.WriteFile(filepath.Join(dir, "server.txt"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	// No host in the name: a usage error, never a guess.
	_, err := Read(context.Background(), nil, []string{dir}, Options{})
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "--instance") {
		t.Fatalf("err = %v, want a usage error asking for --instance", err)
	}
	res, err := Read(context.Background(), nil, []string{dir}, Options{Instance: "gpu-7", Location: time.FixedZone("", 2*3600)})
	if err != nil {
		t.Fatal(err)
	}
	want := "instance,role,pool_tokens,valid_from\ngpu-7,decode,1000,2026-08-26T20:59:58Z\n"
	if got := string(res.CapacityCSV()); got != want {
		t.Errorf("capacity.csv:\n%s\nwant:\n%s", got, want)
	}
	if len(res.Findings) != 0 {
		t.Errorf("findings %v, want none (pool above context)", res.Findings)
	}
}

func TestYearlessTimeNeedsYear(t *testing.T) {
	_, err := Read(context.Background(), nil, []string{"testdata/vllm-d1.log"}, Options{})
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "vllm-d1.log:2:") || !strings.Contains(err.Error(), "--year") {
		t.Fatalf("err = %v, want a usage error at vllm-d1.log:2 (the non-default args line) asking for --year", err)
	}
}

func TestHostFromName(t *testing.T) {
	for name, want := range map[string]string{
		"glm-p0_0.log":                       "glm-p0",
		"glm-p0_0.log.2026-09-02_08.gz":      "glm-p0",
		"glm-p0.log.1.gz":                    "glm-p0",
		"node-3.dc1.example.com_12.log":      "node-3.dc1.example.com",
		"prefill_a_1.log":                    "prefill_a",
		"decode-2.log":                       "decode-2",
		"server.txt":                         "",
		"lost-0_3.log.2026-08-28_03":         "lost-0",
		"sglang-request-metrics-20260902_08": "",
	} {
		if got := HostFromName(name); got != want {
			t.Errorf("HostFromName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNoStartupLine(t *testing.T) {
	dir := t.TempDir()
	log := "[2026-09-02 08:06:40 TP0] Prefill batch. #new-seq: 1, #new-token: 8192\n[2026-09-02 08:06:41] INFO:     10.0.3.9:51522 - \"POST /generate HTTP/1.1\" 200 OK\n"
	if err := os.WriteFile(filepath.Join(dir, "h1.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Read(context.Background(), nil, []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Starts) != 0 || len(res.Problems) != 0 || res.Lines != 2 {
		t.Errorf("starts %d, problems %d, lines %d; want 0, 0, 2", len(res.Starts), len(res.Problems), res.Lines)
	}
}

// The same lines shipped twice (a copy under another name of the same host)
// give one start, and one refused input.
func TestDuplicateShippingCountsOnce(t *testing.T) {
	dir := t.TempDir()
	log := "[2026-08-26 22:58:10] server_args=ServerArgs(model_path='m', disaggregation_mode='prefill')\n" +
		"[2026-08-26 22:59:58] max_total_num_tokens=1000, max_prefill_tokens=16384, max_running_requests=8, context_len=5000, available_gpu_mem=1.00 GB\n" +
		"[2026-08-27 10:00:00] Input length (4000 tokens) exceeds the maximum allowed length (999 tokens). Use a shorter input or enable --allow-auto-truncate., self.rid='r1'\n"
	for _, name := range []string{"h_0.log", "h_0.log.1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Read(context.Background(), nil, []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "instance,role,pool_tokens,context_tokens,valid_from,valid_until,finding,cut_inputs\nh,prefill,1000,5000,2026-08-26T22:59:58Z,,pool_below_context,1\n"
	if got := string(res.FindingsCSV()); got != want || len(res.Starts) != 1 {
		t.Errorf("%d starts, findings.csv:\n%s\nwant one start and:\n%s", len(res.Starts), got, want)
	}
}

// A logged request whose text quotes a start-up line or the refusal is not
// one; a line with the marker inside another message is ignored, not a problem.
func TestQuotedMarkersAreNotLines(t *testing.T) {
	dir := t.TempDir()
	log := "[2026-08-26 22:58:10] server_args=ServerArgs(model_path='m', disaggregation_mode='prefill')\n" +
		"[2026-08-26 22:59:58] max_total_num_tokens=1000, max_prefill_tokens=16384, max_running_requests=8, context_len=5000, available_gpu_mem=1.00 GB\n" +
		"[2026-08-27 10:00:00] Receive: obj=GenerateReqInput(text='why does my server say exceeds the maximum allowed length? max_total_num_tokens=1, context_len=9')\n" +
		"[2026-08-27 10:00:01] Draft model loaded: /m/eagle, max_total_num_tokens=5, context_len=1\n"
	if err := os.WriteFile(filepath.Join(dir, "h_0.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Read(context.Background(), nil, []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Starts) != 1 || res.Starts[0].Cut != 0 || res.Starts[0].Pool != 1000 || len(res.Problems) != 0 {
		t.Errorf("starts %+v, problems %v: want one start of pool 1000, no refused input, no problem", res.Starts, res.Problems)
	}
}
