package notify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/incident"
)

// genericFixture is the fixture with customers whose identifiers are
// ordinary words: t-alpha is "2026", named "Security"; t-delta is named
// "Data", t-eps "Contact". Every notice writes dates in 2026, the word "data", and the
// provider's contact address security@inference.example.
func genericFixture(t *testing.T) (*DraftResult, *Directory) {
	t.Helper()
	db := openDB(t)
	sqlText := strings.ReplaceAll(fixtureSQL, "'t-alpha'", "'2026'")
	if _, err := db.Exec(sqlText); err != nil {
		t.Fatal(err)
	}
	d := strings.Replace(fixtureDirectory, "t-alpha,Alpha Analytics,ops@alpha.example;legal@alpha.example", "2026,Security,dpo@security.example", 1)
	d = strings.Replace(d, "Delta Logistics", "Data", 1)
	d = strings.Replace(d, "Epsilon Conseil", "Contact", 1) // a heading of every notice
	dir, err := ParseDirectory([]byte(d), "tenants.csv")
	if err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Parse([]byte(strings.Replace(testIncidentYAML, "dpo@inference.example", "security@inference.example", 1)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Draft(context.Background(), db, nil, inc, dir, filepath.Join(t.TempDir(), "outbox"), testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	return res, dir
}

func TestGenericNamesBlockNoNotice(t *testing.T) {
	res, _ := genericFixture(t)
	if res.Blocked != 0 {
		for _, n := range res.Notices {
			if n.Status == StatusBlocked {
				t.Errorf("%s blocked: %s", n.File, n.Reason)
			}
		}
		t.Fatalf("%d of %d notices blocked", res.Blocked, res.Drafted)
	}
	// The words are really there: the test would mean nothing otherwise.
	gamma := readOutbox(t, res.Outbox, noticeFor(t, res, "t-gamma").File)
	p := decodeForTest(t, gamma)
	for _, w := range []string{"2026", "data", "security"} {
		if !containsWord(strings.ToLower(p.text), w) {
			t.Errorf("gamma's notice does not contain the word %q", w)
		}
	}
	if !containsWord(strings.ToLower(readOutbox(t, res.Outbox, "regulator.eml")), "2026") {
		t.Error("the regulator notice does not contain 2026")
	}
}

func TestGenericNamesStillCaughtWhereIdentifiersAppear(t *testing.T) {
	res, _ := genericFixture(t)
	gamma := noticeFor(t, res, "t-gamma").File
	clean := readOutbox(t, res.Outbox, gamma)
	checkPlanted(t, res.Outbox, gamma, clean, []plantedLeak{
		{"generic tenant id in attachment row", func(p *parsedMail) { p.attachment += "2026,2026-09-01T10:00:00Z,exposed,confirmed\n" }, "another tenant's tenant id"},
		{"generic name in a list", func(p *parsedMail) { p.text += "\nCustomers concerned:\n- Security\n- Gamma Games\n" }, "another tenant's name"},
		{"generic name in html list", func(p *parsedMail) { p.html += "<ul><li>Data</li></ul>" }, "another tenant's name"},
		{"generic name as a recipient", func(p *parsedMail) { p.header["To"] = []string{p.header.Get("To") + ", Data <it@delta.example>"} }, "headers"},
		{"generic email", func(p *parsedMail) { p.text += "\nwrite to dpo@security.example\n" }, "another tenant's email"},
		{"other tenant's request id", func(p *parsedMail) { p.text += "\nrelated: r-a1\n" }, "another tenant's request id"},
		{"other tenant's text", func(p *parsedMail) { p.text += "\nQuote: Alpha confidential merger plan, with Globex numbers.\n" }, "logged text"},
		{"other tenant's non-generic name", func(p *parsedMail) { p.text += "\nBêta Santé\n" }, "another tenant's name"},
	})
	// The Security tenant's own notice may name it.
	own := noticeFor(t, res, "2026").File
	ownRaw := readOutbox(t, res.Outbox, own)
	os.WriteFile(filepath.Join(res.Outbox, own), rebuild(t, ownRaw, func(p *parsedMail) {
		p.text += "\nCustomer:\n- Security\n- 2026\n"
		p.attachment += "2026,2026-09-01T10:00:00Z,exposed,confirmed\n"
	}), 0o644)
	if got, _ := Check(context.Background(), res.Outbox); len(got.Failures) != 0 {
		t.Fatalf("own generic identifiers flagged: %+v", got.Failures)
	}
}
