package errs

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain", errors.New("boom"), 1},
		{"usage", Usage("window: end before start"), 2},
		{"input wrapped", fmt.Errorf("ingest: %w", Input("a.jsonl:3: ts: not a timestamp")), 3},
		{"blocked", Blocked("notice to t1 names t2"), 4},
		{"finding", Finding("pf-0: pool 681280 below context 1048576"), 5},
		{"finding wins over input", errors.Join(Input("a.log:3: unreadable"), Finding("pf-0: pool below context")), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
	if got, want := Input("x.csv:2: ts: not a timestamp").Error(), "x.csv:2: ts: not a timestamp"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}
