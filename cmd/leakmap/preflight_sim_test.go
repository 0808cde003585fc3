package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// End to end on the simulator: preflight recovers, from the engines' own
// start-up lines, the capacity timeline the simulator used and the
// findings it planted; and leakmap run (and analyze) with that recovered
// timeline gives the same outputs as with the hand-written one.
func TestPreflightRecoversSimulatedTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	base := t.TempDir()
	sim := filepath.Join(base, "sim")
	if code, _, stderr := runCLI(t, "-q", "simulate", "--out", sim, "--requests", "3000"); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	pf := filepath.Join(base, "preflight")
	code, stdout, stderr := runCLI(t, "preflight", "--out", pf, filepath.Join(sim, "real", "engine", "text"))
	if code != 5 {
		t.Fatalf("preflight: exit %d, want 5 (the seed's pool below its context)\n%s\n%s", code, stdout, stderr)
	}
	for got, want := range map[string]string{"capacity.csv": "capacity_timeline.csv", "findings.csv": "preflight_findings.csv"} {
		g, err := os.ReadFile(filepath.Join(pf, got))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(sim, "truth", want))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("preflight's %s differs from the simulator's truth/%s:\n%s\nwant:\n%s", got, want, g, w)
		}
	}
	if !strings.Contains(stdout, "681,280    1,048,576") || !strings.Contains(stdout, "POOL BELOW CONTEXT") {
		t.Errorf("the table does not show the misconfigured pool:\n%s", stdout)
	}

	// The same incident, naming preflight's capacity.csv as its timeline.
	inc, err := os.ReadFile(filepath.Join(sim, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const line = "  timeline: capacity.csv\n"
	if !bytes.Contains(inc, []byte(line)) {
		t.Fatalf("incident.yaml has no %q", line)
	}
	recovered := filepath.Join(sim, "incident-preflight.yaml")
	inc = bytes.Replace(inc, []byte(line), []byte("  timeline: "+filepath.Join(pf, "capacity.csv")+"\n"), 1)
	if err := os.WriteFile(recovered, inc, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(incident, out string) map[string][]byte {
		code, stdout, stderr := runCLI(t, "-q", "run", "--incident", incident, "--tenants", filepath.Join(sim, "tenants.csv"), "--out", out, filepath.Join(sim, "logs"))
		if code != 0 {
			t.Fatalf("run --incident %s: exit %d\n%s\n%s", incident, code, stdout, stderr)
		}
		return outputFiles(t, out) // every output but the case database
	}
	hand := run(filepath.Join(sim, "incident.yaml"), filepath.Join(base, "hand"))
	fromLogs := run(recovered, filepath.Join(base, "recovered"))
	if len(hand) != len(fromLogs) || len(hand) < 8 {
		t.Errorf("%d outputs with the hand-written timeline, %d with the recovered one", len(hand), len(fromLogs))
	}
	for f, b := range hand {
		if !bytes.Equal(b, fromLogs[f]) {
			t.Errorf("%s differs between the hand-written and the recovered timeline", f)
		}
	}
	if bytes.Count(hand["affected_requests.csv"], []byte("\n")) < 2 {
		t.Errorf("no affected request: the comparison proves nothing")
	}
	// analyze on its own reads the timeline the same way.
	again := filepath.Join(base, "analyze")
	if code, _, stderr := runCLI(t, "-q", "analyze", "--db", filepath.Join(base, "hand", "case.duckdb"), "--incident", recovered, "--out", again); code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"affected_requests.csv", "exposures.csv", "tenants.csv"} {
		b, err := os.ReadFile(filepath.Join(again, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, hand[f]) {
			t.Errorf("analyze with the recovered timeline: %s differs", f)
		}
	}
}
