package incident

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/errs"
)

// TestValuesRangeCheckedAtLoad: each value out of its bound stops the load
// with exit 2 and the key named, before any analysis runs.
func TestValuesRangeCheckedAtLoad(t *testing.T) {
	for _, c := range []struct{ name, old, new, key string }{
		{"huge decode pool", "decode_pool_tokens: 3200000", "decode_pool_tokens: 9223372036854775807", "capacity.decode_pool_tokens"},
		{"huge prefill pool", "prefill_pool_tokens: 681280", "prefill_pool_tokens: 4294967296", "capacity.prefill_pool_tokens"},
		{"huge context", "max_context_tokens: 1048576", "max_context_tokens: 9223372036854775807", "capacity.max_context_tokens"},
		{"page size overflow", "page_size: 16", "page_size: 9223372036854775807", "contamination.page_size"},
		{"page size above the pool", "page_size: 16", "page_size: 4000000", "contamination.page_size"},
		{"page size zero", "page_size: 16", "page_size: 0", "contamination.page_size"},
		{"lookback of a year", "possible_lookback: 5m", "possible_lookback: 8760h", "contamination.possible_lookback"},
		{"negative lookback", "possible_lookback: 5m", "possible_lookback: -5m", "contamination.possible_lookback"},
		{"as_of year 1", "contained_at: 2026-09-09T14:00:00Z", "contained_at: 2026-09-09T14:00:00Z\nas_of: 0001-01-01T00:00:00Z", "as_of"},
		{"as_of before the window", "contained_at: 2026-09-09T14:00:00Z", "contained_at: 2026-09-09T14:00:00Z\nas_of: 2026-08-01T00:00:00Z", "as_of"},
		{"window in 1970", "start: 2026-08-27T00:00:00Z", "start: 1970-01-01T00:00:00Z", "window.start"},
		{"window in 20266", "end: 2026-09-09T14:00:00Z", "end: 2100-01-01T00:00:00Z", "window.end"},
		{"join tolerance of a day", "contained_at: 2026-09-09T14:00:00Z", "contained_at: 2026-09-09T14:00:00Z\njoin: {room_tolerance: 24h}", "join.room_tolerance"},
		{"discovered in year 9999", "discovered_at: 2026-09-08T23:11:00Z", "discovered_at: 9999-09-08T23:11:00Z", "discovered_at"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(validYAML, c.old) {
				t.Fatalf("%q not in the base file", c.old)
			}
			_, err := Load(writeCase(t, strings.Replace(validYAML, c.old, c.new, 1)))
			if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), c.key+":") {
				t.Fatalf("err = %v, want a usage error naming %s", err, c.key)
			}
		})
	}
	t.Run("timeline pool", func(t *testing.T) {
		p := writeCase(t, validYAML)
		os.WriteFile(filepath.Join(filepath.Dir(p), "capacity.csv"), []byte("instance,role,pool_tokens,valid_from\np1,prefill,9223372036854775807,2026-09-09T19:40:00Z\n"), 0o644)
		if _, err := Load(p); !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "pool_tokens") {
			t.Fatalf("err = %v, want a usage error naming pool_tokens", err)
		}
	})
	if _, err := Load(writeCase(t, validYAML)); err != nil {
		t.Fatalf("the base file: %v", err)
	}
}

func TestAsOfFlagChecked(t *testing.T) {
	inc, err := Load(writeCase(t, validYAML))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"0001-01-01T00:00:00Z", "2026-08-26T23:59:59Z", "2100-01-01T00:00:00Z"} {
		if inc.CheckAsOf(mustTime(t, s)) == nil {
			t.Errorf("as of %s accepted", s)
		}
	}
	if err := inc.CheckAsOf(mustTime(t, "2026-09-10T09:00:00Z")); err != nil {
		t.Error(err)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
