package filing

import (
	"fmt"
	"sort"
	"strings"

	"github.com/leakmap/leakmap/errs"
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

// CheckWording refuses custom wording that leaves out a language the
// notices need (exit 2): every language that has notices must give the keys
// any language gives (title and delay_reasons only in the regulator
// notice's language), never filled from another language. need counts
// tenant notices per language (nil: the regulator's filing alone, as the
// report's Regulator sheet), who names them (for the message).
func CheckWording(inc *incident.Incident, need map[string]int, who string) error {
	regLang := Language(inc)
	given := map[string]bool{}
	for _, w := range inc.Notices.Wording {
		for _, k := range w.Keys() {
			given[k] = true
		}
	}
	if len(given) == 0 {
		return nil
	}
	langs := []string{regLang}
	for l := range need {
		if l != regLang {
			langs = append(langs, l)
		}
	}
	sort.Strings(langs)
	var problems []string
	for _, l := range langs {
		have := map[string]bool{}
		for _, k := range inc.Notices.Wording[l].Keys() {
			have[k] = true
		}
		var missing []string
		tenantsNeed := false // a missing key is written in tenant notices too
		for _, k := range incident.WordingKeys {
			if given[k] && !have[k] && (!incident.RegulatorOnly(k) || l == regLang) {
				missing = append(missing, k)
				tenantsNeed = tenantsNeed || !incident.RegulatorOnly(k)
			}
		}
		if len(missing) == 0 {
			continue
		}
		var users []string
		if need[l] > 0 && tenantsNeed {
			users = append(users, fmt.Sprintf("%d %s", need[l], who))
		}
		if l == regLang {
			users = append(users, "the regulator notice")
		}
		problems = append(problems, fmt.Sprintf("notices.%s lacks %s, needed by %s in %s", l, strings.Join(missing, ", "), strings.Join(users, " and "), l))
	}
	if len(problems) == 0 {
		return nil
	}
	return errs.Usage("incident %s: custom notice wording leaves out a language the notices need (%s): give the same keys in every language, or none for leakmap's own words",
		inc.Path, strings.Join(problems, "; "))
}
