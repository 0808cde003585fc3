package notify

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	texttemplate "text/template"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
)

// The compiled templates write what text/template writes, on every
// template and language, for views that take every branch of them: the
// roles, the optional times and names, empty and full lists, the plural
// forms (0, 1, many), custom wording, late and on time, and tiers or
// filings the catalogue does not know (both must fail).
func TestCompiledRenderMatchesTextTemplate(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2026))
	count := func() int {
		return []int{0, 1, 2, 999, 1000, 1234567}[rng.IntN(6)]
	}
	when := func() *time.Time {
		if rng.IntN(3) == 0 {
			return nil
		}
		t := gStart.Add(time.Duration(rng.IntN(400*3600)) * time.Second)
		return &t
	}
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	some := func(s []string) []string { return s[:rng.IntN(len(s)+1)] }
	tiers := []string{"", "confirmed", "probable", "possible", "unknown"}
	failures, renders := 0, 0
	var rs renderScratch // reused for every view, as a draft's worker does
	compare := func(kind, lang string, view any) {
		t.Helper()
		want, werr := renderTextTemplate(kind, lang, view)
		got, gerr := render(kind, lang, view)
		renders++
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s.%s: text/template error %v, compiled error %v, view %+v", kind, lang, werr, gerr, view)
		}
		if in, ierr := renderInto(&rs, kind, lang, view); (ierr != nil) != (werr != nil) || ierr == nil && in != want {
			t.Fatalf("%s.%s: render into reused memory differs (error %v)\nwant %q\n got %q", kind, lang, ierr, want, in)
		}
		if werr != nil {
			failures++
			return
		}
		if got != want {
			t.Fatalf("%s.%s: compiled render differs from text/template's\nwant %q\n got %q\nview %+v", kind, lang, want, got, view)
		}
	}
	for _, lang := range languages {
		c := catalog.Get(lang)
		for i := range 300 {
			inc := mustIncident()
			if i%3 == 0 {
				inc = testIncident(t, customWording)
			}
			v := baseTenantView(t, lang, inc)
			v.Supersedes = rng.IntN(2) == 0
			v.Greeting = pick("", "Acme", "Zoë & Co <ops@z.example>")
			v.ContactIsDPO = rng.IntN(2) == 0
			v.DiscoveredAt, v.ContainedAt = when(), when()
			v.Source, v.Recipient = rng.IntN(2) == 0, rng.IntN(2) == 0
			v.SelfOnly = !v.Source && !v.Recipient
			var rows []requestRow
			for range 1 + rng.IntN(5) {
				role, tier := "affected", "none"
				switch {
				case v.Source && (!v.Recipient || rng.IntN(2) == 0):
					role, tier = "exposed", pick("confirmed", "probable", "possible")
				case v.Recipient:
					tier = pick("confirmed", "probable", "possible", "unknown", "none")
				}
				rows = append(rows, reqs(role, tier, rng.IntN(2) == 0, 1+rng.IntN(3), gStart.Add(time.Duration(rng.IntN(1000)-100)*time.Hour))...)
			}
			describeRequests(c, &v, rows, gStart)
			if rng.IntN(2) == 0 { // the counts and tiers apart from the rows
				v.ExposedRequests, v.AffectedRequests, v.BeforeWindow = count(), count(), count()
				v.AttachmentRequests, v.TwiceListed = count(), count()
				v.SourceTier, v.RecipientTier = pick(tiers...), pick(tiers...)
				v.OwnMatches = rng.IntN(2) == 0
			}
			if i%50 == 7 {
				v.SourceTier = "no-such-tier" // fails in both (when a source)
			}
			v.MeasuresTaken, v.MeasuresPlanned, v.DataCategories = some(v.MeasuresTaken), some(v.MeasuresPlanned), some(v.DataCategories)
			if rng.IntN(4) == 0 {
				v.Consequences = ""
			}
			compare("tenant", lang, v)

			w, err := filing.WordingFor(lang, inc)
			if err != nil {
				t.Fatal(err)
			}
			r := goldenRegulatorView(lang, rng.IntN(2) == 0, []int64{-1, 0, 1}[rng.IntN(3)], w)
			r.Supersedes = rng.IntN(2) == 0
			r.ProviderCountry = pick("", "FR", "DE")
			r.ContactIsDPO = rng.IntN(2) == 0
			r.LaunchedAt, r.DiscoveredAt, r.AwareAt, r.ContainedAt = when(), when(), when(), when()
			f := *r.F
			r.F = &f
			f.Filing = pick(filing.Initial, filing.Complete)
			if i%50 == 9 {
				f.Filing = "no-such-filing"
			}
			if rng.IntN(3) == 0 {
				f.Deadline = nil
			}
			f.Notices.Drafted = int64(count())
			r.MeasuresTaken, r.MeasuresPlanned = some(r.MeasuresTaken), some(r.MeasuresPlanned)
			compare("regulator", lang, r)
		}
	}
	if failures == 0 || failures == renders {
		t.Fatalf("%d of %d renders failed: the cases must take both ways", failures, renders)
	}
}

// A construct the compiler does not handle is refused when the templates
// are parsed, never executed differently from text/template.
func TestCompilerRefusesWhatItDoesNotKnow(t *testing.T) {
	c := catalog.Get("en")
	ok := []string{
		`{{.IncidentID}} {{t "tenant.salutation"}}`,
		`{{if and .Source (not .Recipient)}}x{{else if .SelfOnly}}y{{end}}`,
		`{{range .Columns}}{{.Name}}{{end}}{{range items "tenant.recipient.please_items"}}{{.}}{{end}}`,
		`{{t (print "tier." .SourceTier)}} {{list .DataCategories}} {{day .AsOf}}`,
	}
	bad := []string{
		`{{with .Greeting}}{{.}}{{end}}`,                 // with
		`{{$x := .Greeting}}{{$x}}`,                      // variables
		`{{define "y"}}a{{end}}{{template "y"}}`,         // template calls
		`{{.NoSuchField}}`,                               // unknown field
		`{{.ExposedRequests}}`,                           // an int printed through fmt
		`{{.IncidentID | printf "%s"}}`,                  // pipelines, printf
		`{{range .Columns}}x{{else}}y{{end}}`,            // range else
		`{{range $i, $c := .Columns}}{{$c.Name}}{{end}}`, // range variables
		`{{.AsOf.Year}}`,                                 // methods
		`{{index .Columns 0}}`,                           // unknown functions
		`{{day .DiscoveredAt}}`,                          // day of a pointer
		`{{if eq .ExposedRequests 1}}x{{end}}`,           // eq of numbers
		`{{and .Source .Recipient}}`,                     // a condition written
		`{{range .Greeting}}x{{end}}`,                    // range over a string
		`{{"x"}}{{1}}`,                                   // constants other than strings
	}
	for _, src := range append(ok, bad...) {
		tt, err := texttemplate.New("x").Funcs(funcs(c)).Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		_, err = compileTemplate("x", tt.Tree, c, reflect.TypeFor[tenantView]())
		if want := !contains(ok, src); (err != nil) != want {
			t.Errorf("%s: compile error %v, want an error: %v", src, err, want)
		} else if err != nil && !strings.Contains(err.Error(), "not supported by the notice template compiler") {
			t.Errorf("%s: %v", src, err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
