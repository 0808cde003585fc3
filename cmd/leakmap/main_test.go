package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCLI runs leakmap in-process and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpListsExitCodes(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Exit status:", "4  a notice blocked", "5  preflight found"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	tests := [][]string{{"no-such-command"}, {"--no-such-flag"}}
	for _, args := range tests {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("leakmap %v: exit %d, want 2", args, code)
		}
	}
}
