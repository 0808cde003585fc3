package notify

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -tags duckdb_arrow ./notify -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; diff with -update and git diff", name)
	}
}

var (
	gStart = time.Date(2026, 8, 27, 0, 0, 0, 0, time.UTC)
	gEnd   = time.Date(2026, 9, 9, 14, 0, 0, 0, time.UTC)
	gDisc  = time.Date(2026, 9, 8, 23, 11, 0, 0, time.UTC)
	gAware = time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC)
)

func baseTenantView(t *testing.T, lang string, inc *incident.Incident) tenantView {
	w, err := filing.WordingFor(lang, inc)
	if err != nil {
		t.Fatal(err)
	}
	return tenantView{IncidentID: "WAI-2026-0908", ProviderName: "Example Inference SAS", Contact: "dpo@inference.example", ContactIsDPO: true,
		Greeting: "Acme", WindowStart: gStart, WindowEnd: gEnd, DiscoveredAt: &gDisc, ContainedAt: &gEnd,
		AsOf: testAsOf, DeletionDeadline: time.Date(2026, 9, 24, 0, 0, 0, 0, time.UTC), Attachment: catalog.Get(lang).MustT("attachment.file_name", "id", "WAI-2026-0908"),
		DataCategories: w.DataCategories, Consequences: w.Consequences, MeasuresTaken: w.MeasuresTaken, MeasuresPlanned: w.MeasuresPlanned}
}

// checkLegendOnce: every role and tier value of the attachment is
// explained in the notice exactly once.
func checkLegendOnce(t *testing.T, c *catalog.Catalog, name, text string, rows []requestRow) {
	t.Helper()
	values := map[string]bool{}
	for _, r := range rows {
		values[c.MustT("role."+r.Role)] = true
		values[c.MustT("tier."+r.Tier)] = true
	}
	for v := range values {
		prefix := "- " + c.MustT("tenant.file.value", "value", v, "meaning", "")
		if n := strings.Count(text, "\n"+prefix); n != 1 {
			t.Errorf("%s.%s: %q is explained %d times, want once", name, c.Lang, v, n)
		}
	}
	// The own-requests column: each value it holds is explained ("yes",
	// "no" on affected rows; empty on exposed rows).
	prefix := "\n- " + c.MustT("tenant.file.column", "name", c.MustT("attachment.own.name"), "meaning", "")
	i := strings.Index(text, prefix)
	if i < 0 {
		t.Fatalf("%s.%s: the own-requests column is not explained", name, c.Lang)
	}
	line, _, _ := strings.Cut(text[i+len(prefix):], "\n")
	for _, r := range rows {
		want := c.MustT("role.exposed") // an empty cell, on an exposed row
		if r.Role == "affected" {
			want = map[bool]string{true: c.MustT("common.yes"), false: c.MustT("common.no")}[r.Own]
		}
		if !strings.Contains(line, want) && !(r.Role == "exposed" && !values[c.MustT("role.affected")]) {
			t.Errorf("%s.%s: the own-requests column holds the value of an %s row (%q) and its explanation does not say it: %q", name, c.Lang, r.Role, want, line)
			break
		}
	}
}

func mustIncident() *incident.Incident {
	inc, err := incident.Parse([]byte(testIncidentYAML), ".")
	if err != nil {
		panic(err)
	}
	return inc
}

// reqs makes attachment rows: n requests of role, tier (own: also matched
// the tenant's own requests), from ts on, a minute apart.
func reqs(role, tier string, own bool, n int, ts time.Time) []requestRow {
	var out []requestRow
	for i := range n {
		out = append(out, requestRow{Role: role, RequestID: fmt.Sprintf("r-%s-%s-%d", role, tier, i), TS: incident.FormatTime(ts.Add(time.Duration(i) * time.Minute)), Tier: tier, Own: own})
	}
	return out
}

// twice is rows, each followed by the same request's row as exposed, of
// the same tier (a request both affected and exposed).
func twice(rows []requestRow) []requestRow {
	var out []requestRow
	for _, r := range rows {
		e := r
		e.Role, e.Own = "exposed", false
		out = append(out, r, e)
	}
	return out
}

const customWording = `notices:
  en:
    data_categories: [support tickets, chat transcripts]
    consequences: Support tickets of one customer may have been shown to another customer.
    measures_taken: [Model withdrawn on 9 September 2026.]
    measures_planned: [Capacity checks at every start.]
    delay_reasons: the logs of two regions arrived late.
  fr:
    data_categories: [tickets de support, transcriptions de conversations]
    consequences: Des tickets de support d'un client ont pu être montrés à un autre client.
    measures_taken: [Modèle retiré le 9 septembre 2026.]
    measures_planned: [Contrôle de capacité à chaque démarrage.]
    delay_reasons: les journaux de deux régions nous sont parvenus tardivement.
`

// Every kind of notice, in both languages, with counts of 1 and many,
// self-exposure only, unknown owners only, and custom wording.
func TestTemplatesGolden(t *testing.T) {
	day := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		custom bool
		rows   []requestRow
		src    bool
		recv   bool
	}{
		{name: "source-1", src: true, rows: reqs("exposed", "confirmed", false, 1, day)},
		{name: "source", src: true, rows: slices.Concat(reqs("exposed", "confirmed", false, 2, day), reqs("exposed", "probable", false, 17, day.Add(time.Hour)),
			reqs("exposed", "probable", false, 1, gStart.Add(-3*time.Minute)))},
		{name: "recipient-1", recv: true, rows: reqs("affected", "probable", false, 1, day)},
		{name: "recipient", recv: true, rows: slices.Concat(reqs("affected", "confirmed", false, 1, day), reqs("affected", "probable", true, 2, day.Add(time.Hour)),
			reqs("affected", "none", true, 1, day.Add(2*time.Hour)))},
		{name: "recipient-only", recv: true, rows: reqs("affected", "unknown", false, 2, day)},
		{name: "both", src: true, recv: true, rows: slices.Concat(reqs("affected", "confirmed", false, 4, day), reqs("exposed", "possible", false, 1, day.Add(-time.Hour)))},
		// Both roles with the same tier (the demo's common case): each tier
		// explained once, and whose response and request is said once.
		{name: "both-probable", src: true, recv: true, rows: slices.Concat(reqs("affected", "probable", true, 2, day), reqs("affected", "confirmed", false, 1, day.Add(time.Hour)),
			reqs("exposed", "probable", false, 3, day.Add(2*time.Hour)))},
		// Requests with a row for each role: counted once in the text.
		{name: "both-twice-1", src: true, recv: true, rows: slices.Concat(twice(reqs("affected", "probable", false, 1, day)), reqs("exposed", "probable", false, 1, day.Add(time.Hour)))},
		{name: "both-twice", src: true, recv: true, rows: slices.Concat(twice(reqs("affected", "confirmed", false, 3, day)), reqs("affected", "probable", false, 2, day.Add(time.Hour)),
			reqs("exposed", "probable", false, 1, gStart.Add(-3*time.Minute)))},
		{name: "self", rows: reqs("affected", "none", true, 1, day)},
		{name: "custom", custom: true, src: true, rows: reqs("exposed", "probable", false, 3, day)},
	}
	for _, lang := range languages {
		c := catalog.Get(lang)
		for _, tc := range cases {
			inc := mustIncident()
			if tc.custom {
				inc = testIncident(t, customWording)
			}
			v := baseTenantView(t, lang, inc)
			v.Source, v.Recipient, v.SelfOnly = tc.src, tc.recv, !tc.src && !tc.recv
			describeRequests(c, &v, tc.rows, gStart)
			r, err := render("tenant", lang, v)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+"."+lang+".txt", "Subject: "+r.Subject+"\n\n"+r.Text)
			golden(t, tc.name+"."+lang+".html", r.HTML)
			golden(t, tc.name+"."+lang+".csv", string(attachmentCSV(c, tc.rows)))
			checkLegendOnce(t, c, tc.name, r.Text, tc.rows)
		}
		for _, rc := range []struct {
			name   string
			late   bool
			counts int64 // 0, 1, or many (-1)
			custom bool
		}{{"regulator", false, -1, false}, {"regulator-late", true, -1, false}, {"regulator-0", false, 0, false},
			{"regulator-1", false, 1, false}, {"regulator-custom", true, -1, true}} {
			inc := mustIncident()
			if rc.custom {
				inc = testIncident(t, customWording)
			}
			w, err := filing.WordingFor(lang, inc)
			if err != nil {
				t.Fatal(err)
			}
			v := goldenRegulatorView(lang, rc.late, rc.counts, w)
			r, err := render("regulator", lang, v)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, rc.name+"."+lang+".txt", "Subject: "+r.Subject+"\n\n"+r.Text)
			golden(t, rc.name+"."+lang+".html", r.HTML)
		}
	}
}

func goldenRegulatorView(lang string, late bool, counts int64, w filing.Wording) regulatorView {
	launched, first, last := gStart, time.Date(2026, 8, 27, 3, 12, 44, 0, time.UTC), time.Date(2026, 9, 9, 13, 58, 1, 0, time.UTC)
	deadline := gAware.Add(72 * time.Hour)
	f := &filing.Facts{Filing: filing.Complete, RecipientTenants: 40, SourceTenants: 212, TenantsTotal: 240,
		AffectedRequests: 155, ExposedRequests: 1840, Confirmed: 97, Probable: 1604, Possible: 310, SelfExposures: 12,
		FirstAffected: &first, LastAffected: &last, AnalysisRuns: 1,
		Notices: filing.Notices{Drafted: 240, Ready: 236, Blocked: 1, CannotNotify: 3}, Deadline: &deadline, AsOf: testAsOf}
	if counts >= 0 {
		n := counts
		f.RecipientTenants, f.SourceTenants, f.TenantsTotal, f.AffectedRequests, f.ExposedRequests = n, n, n, n, n
		f.Confirmed, f.Probable, f.Possible, f.SelfExposures = n, n, n, n
		f.Notices = filing.Notices{Drafted: n, Ready: n, Blocked: n, CannotNotify: n}
		f.Filing = filing.Initial
		if n == 0 {
			f.FirstAffected, f.LastAffected = nil, nil
		}
	}
	v := regulatorView{IncidentID: "WAI-2026-0908", ProviderName: "Example Inference SAS", ProviderCountry: "FR",
		Contact: "dpo@inference.example", ContactIsDPO: true, F: f,
		LaunchedAt: &launched, DiscoveredAt: &gDisc, AwareAt: &gAware, ContainedAt: &gEnd,
		WindowStart: gStart, WindowEnd: gEnd, AsOf: testAsOf,
		DataCategories: w.DataCategories, Consequences: w.Consequences, MeasuresTaken: regulatorMeasures(catalog.Get(lang), w.MeasuresTaken), MeasuresPlanned: w.MeasuresPlanned, DelayReasons: w.DelayReasons}
	if late {
		v.AsOf = time.Date(2026, 9, 13, 12, 30, 0, 0, time.UTC)
		f.AsOf, f.Late, f.LateBy = v.AsOf, true, v.AsOf.Sub(deadline)
		v.LateBy = catalog.Get(lang).Duration(f.LateBy)
	}
	return v
}

// The drafted .eml files themselves, MIME and all.
func TestEMLGolden(t *testing.T) {
	_, res := draftFixture(t)
	for _, tenant := range []string{"t-delta", "t-beta", ""} {
		n := noticeFor(t, res, tenant)
		golden(t, strings.TrimSuffix(n.File, ".eml")+".eml", readOutbox(t, res.Outbox, n.File))
	}
	golden(t, "index.csv", readOutbox(t, res.Outbox, IndexName))
}

// The attachment's requests are counted once however many roles list
// them, and the ones received before the window once too, whichever role
// lists fewer.
func TestDescribeRequestsCountsEachRequestOnce(t *testing.T) {
	day := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	early := gStart.Add(-time.Hour)
	for _, tc := range []struct {
		name                              string
		rows                              []requestRow
		rowsN, requests, twice, beforeWin int
	}{
		{"one role", reqs("exposed", "probable", false, 3, day), 3, 3, 0, 0},
		{"affected fewer", slices.Concat(twice(reqs("affected", "probable", false, 2, day)), reqs("exposed", "probable", false, 4, day.Add(time.Hour))), 8, 6, 2, 0},
		{"exposed fewer", slices.Concat(twice(reqs("affected", "probable", false, 1, day)), reqs("affected", "confirmed", false, 4, day.Add(time.Hour))), 6, 5, 1, 0},
		{"before the window", slices.Concat(twice(reqs("affected", "probable", false, 2, early)), reqs("exposed", "probable", false, 1, early)), 5, 3, 2, 3},
	} {
		v := baseTenantView(t, "en", mustIncident())
		describeRequests(catalog.Get("en"), &v, tc.rows, gStart)
		if rows := v.AttachmentRequests + v.TwiceListed; rows != tc.rowsN || v.AttachmentRequests != tc.requests || v.TwiceListed != tc.twice || v.BeforeWindow != tc.beforeWin {
			t.Errorf("%s: rows %d, requests %d, twice %d, before %d; want %d, %d, %d, %d", tc.name,
				rows, v.AttachmentRequests, v.TwiceListed, v.BeforeWindow, tc.rowsN, tc.requests, tc.twice, tc.beforeWin)
		}
	}
}
