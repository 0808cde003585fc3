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

const validYAML = `id: WAI-2026-0908
title: Cross-tenant data in glm-5.3 responses
models: [glm-5.3]
window: {start: 2026-08-27T00:00:00Z, end: 2026-09-09T14:00:00Z}
launched_at: 2026-08-27T00:00:00Z
discovered_at: 2026-09-08T23:11:00Z
aware_at: 2026-09-09T12:00:00+02:00
contained_at: 2026-09-09T14:00:00Z
capacity:
  max_context_tokens: 1048576
  prefill_pool_tokens: 681280
  decode_pool_tokens: 3200000
  timeline: capacity.csv
contamination:
  model: replay
  allocator: fifo
  page_size: 16
  possible_lookback: 5m
provider: {name: Example Cloud, email: security@example.net, dpo_email: dpo@example.net, country: FR}
`

const timelineCSV = `instance,role,pool_tokens,valid_from
p1,prefill,2040000,2026-09-09T19:40:00Z
p1,prefill,500000,2026-09-01T00:00:00+02:00
d1,decode,4000000,2026-09-09T19:40:00Z
`

func writeCase(t *testing.T, yamlText string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "capacity.csv"), []byte(timelineCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "incident.yaml")
	if err := os.WriteFile(p, []byte(yamlText), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadValid(t *testing.T) {
	inc, err := Load(writeCase(t, validYAML))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *inc.AwareAt, time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("aware_at = %v, want %v in UTC", got, want)
	}
	if inc.Contamination.Allocator != AllocFIFO || inc.Contamination.PageSize != 16 {
		t.Errorf("contamination = %+v", inc.Contamination)
	}
	if got, want := inc.Contamination.ResidencyLookback, 30*time.Minute; got != want {
		t.Errorf("residency default = %v, want %v", got, want)
	}
	if got, want := inc.Contamination.PossibleLookback, 5*time.Minute; got != want {
		t.Errorf("possible_lookback = %v, want %v", got, want)
	}
	if !inc.InScope("glm-5.3") || inc.InScope("llama") {
		t.Error("InScope wrong")
	}
	c := inc.Capacity
	pool := []struct {
		inst, role string
		at         string
		want       int64
	}{
		{"p1", RolePrefill, "2026-08-30T00:00:00Z", 681280},  // before the first row: default
		{"p1", RolePrefill, "2026-08-31T22:00:00Z", 500000},  // exactly at valid_from (offset normalised)
		{"p1", RolePrefill, "2026-09-09T19:39:59Z", 500000},  // still the first row
		{"p1", RolePrefill, "2026-09-09T19:40:00Z", 2040000}, // the fix
		{"p2", RolePrefill, "2026-09-10T00:00:00Z", 681280},  // unlisted instance
		{"d1", RoleDecode, "2026-09-01T00:00:00Z", 3200000},
		{"d1", RoleDecode, "2026-09-10T00:00:00Z", 4000000},
		{"p1", RoleDecode, "2026-09-10T00:00:00Z", 3200000}, // the role matters
	}
	for _, p := range pool {
		at, _ := ParseTime(p.at)
		if got := c.PoolAt(p.inst, p.role, at); got != p.want {
			t.Errorf("PoolAt(%s,%s,%s) = %d, want %d", p.inst, p.role, p.at, got, p.want)
		}
	}
}

func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		name, from, to, wantField string
	}{
		{"window reversed", "end: 2026-09-09T14:00:00Z}", "end: 2026-08-01T00:00:00Z}", "window.end"},
		{"empty models", "models: [glm-5.3]", "models: []", "models"},
		{"zero prefill pool", "prefill_pool_tokens: 681280", "prefill_pool_tokens: 0", "capacity.prefill_pool_tokens"},
		{"zero decode pool", "decode_pool_tokens: 3200000", "decode_pool_tokens: 0", "capacity.decode_pool_tokens"},
		{"unknown model", "model: replay", "model: oracle", "contamination.model"},
		{"unknown allocator", "allocator: fifo", "allocator: buddy", "contamination.allocator"},
		{"bad duration", "possible_lookback: 5m", "possible_lookback: five", "contamination.possible_lookback"},
		{"bad time", "discovered_at: 2026-09-08T23:11:00Z", "discovered_at: yesterday", "discovered_at"},
		{"unknown field", "title:", "titel:", "titel"},
		{"missing timeline", "timeline: capacity.csv", "timeline: nope.csv", "capacity.timeline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := strings.Replace(validYAML, tt.from, tt.to, 1)
			if y == validYAML {
				t.Fatalf("replacement %q not applied", tt.from)
			}
			_, err := Load(writeCase(t, y))
			if err == nil {
				t.Fatal("want an error")
			}
			if !errors.Is(err, errs.ErrUsage) {
				t.Errorf("error %v is not a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error %q does not name %q", err, tt.wantField)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestParseTimelineErrors(t *testing.T) {
	tests := []struct{ name, csv, want string }{
		{"missing column", "instance,role,valid_from\n", `missing column "pool_tokens"`},
		{"bad role", "instance,role,pool_tokens,valid_from\np1,gpu,5,2026-01-01T00:00:00Z\n", "cap.csv:2: role"},
		{"bad tokens", "instance,role,pool_tokens,valid_from\np1,prefill,-5,2026-01-01T00:00:00Z\n", "cap.csv:2: pool_tokens"},
		{"bad time", "instance,role,pool_tokens,valid_from\np1,prefill,5,2026-01-01\n", "cap.csv:2: valid_from"},
	}
	for _, tt := range tests {
		_, err := ParseTimeline([]byte(tt.csv), "cap.csv")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestJoinTolerances(t *testing.T) {
	tests := []struct {
		name, extra   string
		room, gateway time.Duration
		wantErr       string
	}{
		{"defaults", "", 30 * time.Second, 2 * time.Second, ""},
		{"given", "join: {room_tolerance: 1m, gateway_tolerance: 500ms}\n", time.Minute, 500 * time.Millisecond, ""},
		{"one given", "join:\n  gateway_tolerance: 3s\n", 30 * time.Second, 3 * time.Second, ""},
		{"not a duration", "join: {room_tolerance: half a minute}\n", 0, 0, "join.room_tolerance"},
		{"negative", "join: {gateway_tolerance: -2s}\n", 0, 0, "join.gateway_tolerance"},
		{"unknown key", "join: {rooms: 30s}\n", 0, 0, "rooms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inc, err := Load(writeCase(t, validYAML+tt.extra))
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a usage error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if inc.Join.RoomTolerance != tt.room || inc.Join.GatewayTolerance != tt.gateway {
				t.Errorf("join = %+v, want room %v gateway %v", inc.Join, tt.room, tt.gateway)
			}
		})
	}
}
