package notify

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/incident"
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

func baseTenantView(lang string) tenantView {
	w := defaultWording(lang, mustIncident())
	return tenantView{IncidentID: "WAI-2026-0908", ProviderName: "Example Inference SAS", Contact: "dpo@inference.example",
		Greeting: "Acme", Lang: lang, WindowStart: "2026-08-27T00:00:00Z", WindowEnd: "2026-09-09T14:00:00Z",
		DiscoveredAt: "2026-09-08T23:11:00Z", ContainedAt: "2026-09-09T14:00:00Z", AsOf: "2026-09-10T09:00:00Z",
		DeletionDeadline: "2026-09-24T00:00:00Z", Attachment: "WAI-2026-0908-requests.csv",
		DataCategories: w.DataCategories, Consequences: w.Consequences, MeasuresTaken: w.MeasuresTaken, MeasuresPlanned: w.MeasuresPlanned}
}

func mustIncident() *incident.Incident {
	inc, err := incident.Parse([]byte(testIncidentYAML), ".")
	if err != nil {
		panic(err)
	}
	return inc
}

func TestTemplatesGolden(t *testing.T) {
	for _, lang := range languages {
		cases := map[string]func(v *tenantView){
			"source":    func(v *tenantView) { v.Source, v.ExposedRequests, v.SourceTier = true, 3, "confirmed" },
			"recipient": func(v *tenantView) { v.Recipient, v.AffectedRequests, v.RecipientTier = true, 2, "probable" },
			"both": func(v *tenantView) {
				v.Source, v.ExposedRequests, v.SourceTier = true, 1, "possible"
				v.Recipient, v.AffectedRequests, v.RecipientTier = true, 4, "confirmed"
			},
			"self": func(v *tenantView) { v.SelfOnly, v.AffectedRequests, v.RecipientTier = true, 1, "probable" },
		}
		for name, set := range cases {
			v := baseTenantView(lang)
			set(&v)
			r, err := render("tenant", lang, v)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+"."+lang+".txt", "Subject: "+r.Subject+"\n\n"+r.Text)
			golden(t, name+"."+lang+".html", r.HTML)
		}
		for name, met := range map[string]bool{"regulator": true, "regulator-late": false} {
			v := goldenRegulatorView(lang, met)
			r, err := render("regulator", lang, v)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+"."+lang+".txt", "Subject: "+r.Subject+"\n\n"+r.Text)
			golden(t, name+"."+lang+".html", r.HTML)
		}
	}
}

func goldenRegulatorView(lang string, met bool) regulatorView {
	w := defaultWording(lang, mustIncident())
	v := regulatorView{IncidentID: "WAI-2026-0908", ProviderName: "Example Inference SAS", ProviderCountry: "FR",
		Contact: "dpo@inference.example", Lang: lang, RecipientTenants: 40, SourceTenants: 212, TenantsTotal: 240,
		AffectedRequests: 155, ExposedRequests: 1840, Confirmed: 97, Probable: 1604, Possible: 310, SelfExposures: 12,
		FirstAffected: "2026-08-27T03:12:44Z", LastAffected: "2026-09-09T13:58:01Z",
		LaunchedAt: "2026-08-27T00:00:00Z", WindowStart: "2026-08-27T00:00:00Z", WindowEnd: "2026-09-09T14:00:00Z",
		DiscoveredAt: "2026-09-08T23:11:00Z", AwareAt: "2026-09-09T10:00:00Z", ContainedAt: "2026-09-09T14:00:00Z",
		AsOf: "2026-09-10T09:00:00Z", Deadline: "2026-09-12T10:00:00Z", DeadlineMet: true,
		DataCategories: w.DataCategories, Consequences: w.Consequences, MeasuresTaken: w.MeasuresTaken, MeasuresPlanned: w.MeasuresPlanned, DelayReasons: w.DelayReasons}
	if !met {
		v.AsOf, v.DeadlineMet, v.LateBy = "2026-09-13T12:30:00Z", false, "26h30m"
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
