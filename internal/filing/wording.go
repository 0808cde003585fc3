package filing

import (
	"strings"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
)

// Wording is one language's words for the parts the incident file may set.
type Wording struct {
	Title           string // the Regulator sheet's
	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
	DelayReasons    string // shown only when the regulator notice is late
	Custom          []string
}

// Language is the regulator filing's language (the regulator notice's and
// the Regulator sheet's): French when the provider is established in
// France, else English.
func Language(inc *incident.Incident) string {
	if strings.EqualFold(inc.Provider.Country, "FR") {
		return "fr"
	}
	return "en"
}

// WordingFor is lang's wording: the incident file's notices.LANG where it
// gives a key, else leakmap's own words in that language.
func WordingFor(lang string, inc *incident.Incident) (Wording, error) {
	c, err := catalog.Load(lang)
	if err != nil {
		return Wording{}, err
	}
	w := Wording{DataCategories: c.List("wording.data_categories"), Consequences: OneLine(c.MustT("wording.consequences")),
		MeasuresPlanned: c.List("wording.measures_planned"), DelayReasons: OneLine(c.MustT("wording.delay_reasons"))}
	// The top-level title is the report's, in English like the rest of it:
	// another language's sheet has a title of that language or leakmap's.
	w.Title = OneLine(inc.Title)
	if lang != "en" || w.Title == "" {
		w.Title = c.MustT("wording.title", "models", strings.Join(inc.Models, c.MustT("common.list_sep")))
	}
	if inc.ContainedAt != nil {
		w.MeasuresTaken, err = c.ListT("wording.measures_taken", "contained", *inc.ContainedAt)
	} else {
		w.MeasuresTaken, err = c.ListT("wording.measures_taken_not_contained")
	}
	if err != nil {
		return w, err
	}
	n := inc.Notices.Wording[lang]
	w.Custom = n.Keys()
	if n.Title != "" {
		w.Title = OneLine(n.Title)
	}
	if len(n.DataCategories) > 0 {
		w.DataCategories = n.DataCategories
	}
	if n.Consequences != "" {
		w.Consequences = OneLine(n.Consequences)
	}
	if len(n.MeasuresTaken) > 0 {
		w.MeasuresTaken = n.MeasuresTaken
	}
	if len(n.MeasuresPlanned) > 0 {
		w.MeasuresPlanned = n.MeasuresPlanned
	}
	if n.DelayReasons != "" {
		w.DelayReasons = OneLine(n.DelayReasons)
	}
	for _, l := range [][]string{w.DataCategories, w.MeasuresTaken, w.MeasuresPlanned} {
		for i := range l {
			l[i] = OneLine(l[i])
		}
	}
	return w, nil
}

// OneLine folds a value's line breaks into spaces: the notice markup is
// line-based, and a value never starts a block of its own.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
