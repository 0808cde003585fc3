package filing

import (
	"testing"

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
