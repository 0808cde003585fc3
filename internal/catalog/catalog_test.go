package catalog

import (
	"slices"
	"testing"
	"time"
)

// Both catalogues hold the same keys, so no language falls back on another.
func TestSameKeys(t *testing.T) {
	en, fr := Get("en").Keys(), Get("fr").Keys()
	for _, k := range en {
		if !slices.Contains(fr, k) {
			t.Errorf("fr.yaml lacks %s", k)
		}
	}
	for _, k := range fr {
		if !slices.Contains(en, k) {
			t.Errorf("en.yaml lacks %s", k)
		}
	}
}

// Plurals follow CLDR: English singular for 1 only, French for 0 and 1.
func TestPlurals(t *testing.T) {
	tests := []struct {
		lang string
		n    int
		want string
	}{
		{"en", 0, "0 requests"}, {"en", 1, "1 request"}, {"en", 2, "2 requests"}, {"en", 1840, "1,840 requests"},
		{"fr", 0, "0 requête"}, {"fr", 1, "1 requête"}, {"fr", 2, "2 requêtes"}, {"fr", 1840, "1\u00a0840 requêtes"},
	}
	for _, tt := range tests {
		if got := Get(tt.lang).MustT("tenant.requests", "n", tt.n); got != tt.want {
			t.Errorf("%s %d: %q, want %q", tt.lang, tt.n, got, tt.want)
		}
	}
	if _, err := Get("en").T("tenant.requests"); err == nil {
		t.Error("a plural message without n is accepted")
	}
	if _, err := Get("en").T("no.such.key"); err == nil {
		t.Error("an unknown key is accepted")
	}
}

func TestDates(t *testing.T) {
	at := time.Date(2026, 8, 27, 0, 0, 0, 0, time.UTC)
	first := time.Date(2026, 9, 1, 14, 5, 0, 0, time.FixedZone("CEST", 7200))
	tests := []struct{ lang, got, want string }{
		{"en", Get("en").DateTime(at), "27 August 2026, 00:00 UTC"},
		{"fr", Get("fr").DateTime(at), "27 août 2026 à 00:00 UTC"},
		{"fr", Get("fr").DateTime(first), "1er septembre 2026 à 12:05 UTC"},
		{"en", Get("en").Date(first), "1 September 2026"},
		{"en", Get("en").Duration(26*time.Hour + 5*time.Minute), "26 hours and 5 minutes"},
		{"fr", Get("fr").Duration(time.Hour), "1 heure"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.lang, tt.got, tt.want)
		}
	}
}
