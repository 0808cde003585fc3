package simulate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/incident"
)

// The start-up lines' timeline (every start of every host) says the same
// as capacity.csv with the incident file's defaults, at every hour of the
// logs and at every change; and the text logs hold the lines a reader needs.
func TestStartupTimelineMatchesCapacity(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Requests = 3000
	if _, err := Generate(context.Background(), nil, dir, cfg); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := incident.LoadTimeline(filepath.Join(dir, "truth", "capacity_timeline.csv"))
	if err != nil {
		t.Fatal(err)
	}
	byStarts := inc.Capacity
	byStarts.Timeline = full
	hosts := map[string]string{}
	for _, ch := range full {
		hosts[ch.Instance] = ch.Role
	}
	if len(hosts) < cfg.PrefillInstances+cfg.DecodeInstances {
		t.Fatalf("%d hosts in the start-up timeline, want at least %d", len(hosts), cfg.PrefillInstances+cfg.DecodeInstances)
	}
	times := []time.Time{}
	for at := cfg.LogStart; at.Before(cfg.LogEnd); at = at.Add(time.Hour) {
		times = append(times, at)
	}
	for _, ch := range inc.Capacity.Timeline {
		// Before the logs begin nothing is asked of the timeline.
		for _, at := range []time.Time{ch.ValidFrom, ch.ValidFrom.Add(-time.Millisecond)} {
			if !at.Before(cfg.LogStart) {
				times = append(times, at)
			}
		}
	}
	for h, role := range hosts {
		for _, at := range times {
			if got, want := byStarts.PoolAt(h, role, at), inc.Capacity.PoolAt(h, role, at); got != want {
				t.Errorf("%s %s at %s: start-up lines say %d, capacity.csv %d", h, role, at.Format(time.RFC3339Nano), got, want)
			}
		}
	}
	// pf-1 restarted twice: its runs are rotated, the oldest in .2.gz.
	log, err := os.ReadFile(filepath.Join(dir, "real", "engine", "text", prefillName(1)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"disaggregation_mode='prefill'", " TP3] KV Cache is allocated. #tokens: 2040000,", " TP0] max_total_num_tokens=2040000, chunked_prefill_size=8192,", "context_len=1048576"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("%s.log lacks %q", prefillName(1), want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "real", "engine", "text", prefillName(1)+".log.2.gz")); err != nil {
		t.Error(err)
	}
	findings, err := os.ReadFile(filepath.Join(dir, "truth", "preflight_findings.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(findings), "\n") - 1; n != cfg.PrefillInstances+1 {
		t.Errorf("%d findings, want %d (each in-scope prefill host until the fix, pf-1 twice):\n%s", n, cfg.PrefillInstances+1, findings)
	}
}
