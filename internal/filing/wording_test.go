package filing

import (
	"errors"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
)

// The Regulator sheet's title is in the filing's language: the incident
// file's notices.LANG.title, else (in English only) the top-level title,
// which is the English report's, else leakmap's own words in that language.
func TestWordingTitle(t *testing.T) {
	enDefault := catalog.Get("en").MustT("wording.title", "models", "glm-5.3, kimi-k3")
	frDefault := catalog.Get("fr").MustT("wording.title", "models", "glm-5.3, kimi-k3")
	for _, tc := range []struct {
		name, lang, top string
		given           map[string]string
		want            string
	}{
		{"english, top-level title", "en", "Leak in glm-5.3", nil, "Leak in glm-5.3"},
		{"english, none", "en", "", nil, enDefault},
		{"english, notices.en.title wins", "en", "Leak in glm-5.3", map[string]string{"en": "Customer data in answers"}, "Customer data in answers"},
		{"french, the English top-level title left out", "fr", "Leak in glm-5.3", nil, frDefault},
		{"french, notices.fr.title", "fr", "Leak in glm-5.3", map[string]string{"fr": "Fuite  de\ndonnées"}, "Fuite de données"},
		{"french, notices.en.title not borrowed", "fr", "", map[string]string{"en": "Customer data in answers"}, frDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inc := &incident.Incident{Title: tc.top, Models: []string{"glm-5.3", "kimi-k3"}, Notices: incident.Notices{Wording: map[string]incident.Wording{}}}
			for l, title := range tc.given {
				inc.Notices.Wording[l] = incident.Wording{Title: title}
			}
			w, err := WordingFor(tc.lang, inc)
			if err != nil {
				t.Fatal(err)
			}
			if w.Title != tc.want {
				t.Errorf("title %q, want %q", w.Title, tc.want)
			}
		})
	}
	if enDefault == frDefault || enDefault == "" {
		t.Errorf("the catalogues' default titles: %q, %q", enDefault, frDefault)
	}
}

// CheckWording: a key one language gives is needed in every language that
// has notices, the title and the delay reasons in the regulator's alone;
// need nil is the regulator's filing alone (the report's Regulator sheet).
func TestCheckWording(t *testing.T) {
	en := map[string]incident.Wording{"en": {MeasuresTaken: []string{"model withdrawn"}}}
	enTitle := map[string]incident.Wording{"en": {Title: "Leak in glm-5.3"}}
	enReasons := map[string]incident.Wording{"en": {DelayReasons: "logs arrived late"}}
	both := map[string]incident.Wording{"en": {MeasuresTaken: []string{"model withdrawn"}}, "fr": {MeasuresTaken: []string{"modèle retiré"}}}
	for _, tc := range []struct {
		name    string
		country string
		wording map[string]incident.Wording
		need    map[string]int
		want    string // "" when accepted
	}{
		{"no custom wording", "FR", nil, map[string]int{"en": 3}, ""},
		{"both languages", "FR", both, map[string]int{"en": 3, "fr": 1}, ""},
		{"the sheet alone, in French", "FR", en, nil, "notices.fr lacks measures_taken, needed by the regulator notice in fr"},
		{"the sheet alone, in English", "DE", en, nil, ""},
		{"French tenants, English regulator", "DE", en, map[string]int{"fr": 2}, "notices.fr lacks measures_taken, needed by 2 tenant notice(s) in fr"},
		{"French tenants and regulator", "FR", en, map[string]int{"fr": 2}, "notices.fr lacks measures_taken, needed by 2 tenant notice(s) and the regulator notice in fr"},
		{"a title, French tenants, English regulator", "DE", enTitle, map[string]int{"fr": 2}, ""},
		{"a title, French regulator", "FR", enTitle, map[string]int{"fr": 2, "en": 1}, "notices.fr lacks title, needed by the regulator notice in fr"},
		{"delay reasons, French regulator", "FR", enReasons, nil, "notices.fr lacks delay_reasons, needed by the regulator notice in fr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inc := &incident.Incident{Path: "incident.yaml", Provider: incident.Provider{Country: tc.country}, Notices: incident.Notices{Wording: tc.wording}}
			err := CheckWording(inc, tc.need, "tenant notice(s)")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			case err != nil && !errors.Is(err, errs.ErrUsage):
				t.Errorf("%v is not a usage error (exit 2)", err)
			}
		})
	}
}
