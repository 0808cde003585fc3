package main

import (
	"io"
	"runtime/debug"
	"testing"
)

// --memory-limit is also the soft limit of leakmap's own heap, at least
// 512 MiB, unless GOMEMLIMIT sets one; a run puts the process's back.
func TestMemoryLimitBoundsTheGoHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tc := range []struct {
		flag, env string
		want      int64
	}{
		{"2GiB", "", 2 << 30},
		{"100MiB", "", 512 << 20},
		{"2GiB", "5GiB", 1 << 40}, // GOMEMLIMIT wins: the limit is left as it was
	} {
		t.Setenv("GOMEMLIMIT", tc.env)
		debug.SetMemoryLimit(1 << 40)
		(&globalOptions{memoryLimit: tc.flag}).limitGoHeap()
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("--memory-limit %s, GOMEMLIMIT %q: Go's limit %d, want %d", tc.flag, tc.env, got, tc.want)
		}
	}
	debug.SetMemoryLimit(1 << 40)
	if code := execute(t.Context(), []string{"--memory-limit", "1GiB", "version"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("version: exit %d", code)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("after a run the limit is %d, not put back", got)
	}
}
