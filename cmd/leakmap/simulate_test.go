package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "simulate", "--out", dir, "--requests", "600", "--allocator", "lifo", "--noise=false", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"incident.yaml", "capacity.csv", "tenants.csv", "truth/exposures.csv", "logs/requests-2026-09-01.jsonl.gz",
		"incident-real.yaml", "truth/real_calls.csv", "real/gateway/LiteLLM_SpendLogs_2026-09-01.csv.gz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(out, "real layouts: 600 gateway rows") || !strings.Contains(out, "--incident "+filepath.Join(dir, "incident-real.yaml")) {
		t.Errorf("output does not describe the real layouts:\n%s", out)
	}
	if !strings.Contains(out, dir) {
		t.Errorf("output does not say where files went:\n%s", out)
	}
	canon := t.TempDir()
	code, out, errOut = runCLI(t, "simulate", "--out", canon, "--requests", "600", "--canonical-only")
	if code != 0 {
		t.Fatalf("--canonical-only: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "real layouts") || !strings.Contains(out, filepath.Join(canon, "incident.yaml")) {
		t.Errorf("--canonical-only output:\n%s", out)
	}
	for _, f := range []string{"incident-real.yaml", "real/gateway", "truth/real_calls.csv"} {
		if _, err := os.Stat(filepath.Join(canon, f)); !os.IsNotExist(err) {
			t.Errorf("--canonical-only wrote %s (%v)", f, err)
		}
	}
	inc, _ := os.ReadFile(filepath.Join(dir, "incident.yaml"))
	if !strings.Contains(string(inc), "allocator: lifo") {
		t.Errorf("incident.yaml lacks the allocator:\n%s", inc)
	}
	for _, args := range [][]string{
		{"simulate"},
		{"simulate", "--out", dir, "--allocator", "random"},
		{"simulate", "--out", dir, "--requests", "3"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("leakmap %v: exit %d, want 2", args, code)
		}
	}
}
