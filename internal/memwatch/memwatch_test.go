package memwatch

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestStep(t *testing.T) {
	if RSS() <= 0 {
		t.Skip("no /proc/self/statm here")
	}
	var buf bytes.Buffer
	Step(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)), "quiet")
	if buf.Len() != 0 {
		t.Errorf("logged without debug: %q", buf.String())
	}
	debug := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	Step(context.Background(), debug, "first")
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	Step(context.Background(), debug, "second", "query", "q")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	for _, k := range []string{"query=q", "rss_peak_mib=", "rss_mib=", "go_heap_mib="} {
		if !strings.Contains(lines[1], k) {
			t.Errorf("%q lacks %s", lines[1], k)
		}
	}
	if !strings.Contains(lines[1], "go_heap_mib=6") { // 64 MiB live
		t.Errorf("the 64 MiB slice is not in the Go heap: %q", lines[1])
	}
	_ = big[len(big)-1]
}
