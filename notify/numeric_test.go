package notify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// numericFixture is the fixture with bare numeric request ids, some of
// which collide with what every notice writes itself: beta's "1" (a count),
// delta's "2026" (the year), eps's "14" (an hour), zeta's "9" (a day).
func numericFixture(t *testing.T) (*DraftResult, func() *CheckResult) {
	t.Helper()
	sqlText := fixtureSQL
	for from, to := range map[string]string{"r-a1": "40417", "r-b1": "1", "r-g1": "88231", "r-d1": "2026", "r-d9": "77001",
		"r-g2": "88232", "r-e1": "14", "r-e2": "31", "r-z1": "9", "r-h1": "59"} {
		sqlText = strings.ReplaceAll(sqlText, "'"+from+"'", "'"+to+"'")
	}
	db := openDB(t)
	if _, err := db.Exec(sqlText); err != nil {
		t.Fatal(err)
	}
	dir, err := ParseDirectory([]byte(fixtureDirectory), "tenants.csv")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Draft(context.Background(), db, nil, testIncident(t, ""), dir, filepath.Join(t.TempDir(), "outbox"), testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	// The standalone check with the manifest rebuilt from the case must
	// judge as the outbox's own manifest does.
	checkCase := func() *CheckResult {
		got, err := CheckCase(context.Background(), db, res.Outbox)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	return res, checkCase
}

// TestNumericRequestIDInProse: another tenant's bare numeric request id
// written inside running prose blocks the notice (it was caught only in the
// attachment and in joined ids), while the notice's own counts, dates and
// ids that equal foreign ids numerically block nothing.
func TestNumericRequestIDInProse(t *testing.T) {
	res, checkCase := numericFixture(t)
	if res.Blocked != 0 {
		for _, n := range res.Notices {
			if n.Status == StatusBlocked {
				t.Errorf("%s blocked: %s", n.File, n.Reason)
			}
		}
		t.Fatalf("%d of %d notices blocked by their own dates and counts", res.Blocked, res.Drafted)
	}
	if got := checkCase(); len(got.Failures) != 0 {
		t.Fatalf("check --db of the clean outbox: %+v", got.Failures)
	}
	gamma := noticeFor(t, res, "t-gamma").File
	clean := readOutbox(t, res.Outbox, gamma)
	// The collisions are real: gamma's prose writes 1, 9, 14 and 2026.
	p := decodeForTest(t, clean)
	for _, w := range []string{"1", "9", "14", "2026"} {
		if !containsWord(p.text, w) {
			t.Fatalf("gamma's notice does not write %q: the test would mean nothing", w)
		}
	}
	tests := []struct {
		name  string
		edit  func(p *parsedMail)
		block string // "" when the notice must pass
	}{
		{"foreign id in a sentence", func(p *parsedMail) {
			p.text = strings.Replace(p.text, "WHAT HAPPENED", "WHAT HAPPENED\n\nYour request matched request 40417 of another customer.", 1)
		}, "another tenant's request id"},
		{"foreign id in the subject", func(p *parsedMail) { p.subject += " (request 77001)" }, "another tenant's request id"},
		{"foreign id in html prose", func(p *parsedMail) { p.html += "<p>It came from request 77001, sent earlier.</p>" }, "another tenant's request id"},
		{"foreign id that is a time's digits elsewhere", func(p *parsedMail) { p.text += "\nSee also 59 in our logs.\n" }, "another tenant's request id"},
		{"foreign id in the attachment", func(p *parsedMail) { p.attachment += "40417,2026-09-01T10:00:00Z,exposed,confirmed,\n" }, "another tenant's request id"},
		{"foreign id equal to an own count, in the attachment", func(p *parsedMail) { p.attachment += "1,2026-09-01T10:00:02Z,exposed,probable,\n" }, "another tenant's request id"},
		{"own ids in prose", func(p *parsedMail) { p.text += "\nYour requests 88231 and 88232 are listed.\n" }, ""},
		// Decided (docs/notices.md): a foreign id equal to a number the
		// notice's own facts write is indistinguishable from it in prose.
		{"foreign id equal to an own count, in prose", func(p *parsedMail) { p.text += "\nRequest 1 was involved.\n" }, ""},
		{"foreign id equal to the year, in prose", func(p *parsedMail) { p.text += "\nIn 2026 we changed the pool.\n" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(res.Outbox, gamma), rebuild(t, clean, tt.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(filepath.Join(res.Outbox, gamma), []byte(clean), 0o644)
			for _, c := range []struct {
				how string
				got func() *CheckResult
			}{
				{"outbox manifest", func() *CheckResult {
					got, err := Check(context.Background(), res.Outbox)
					if err != nil {
						t.Fatal(err)
					}
					return got
				}},
				{"manifest from the case", checkCase},
			} {
				got := c.got()
				if tt.block == "" {
					if len(got.Failures) != 0 {
						t.Errorf("%s: want no failure, got %+v", c.how, got.Failures)
					}
					continue
				}
				if len(got.Failures) != 1 || got.Failures[0].File != gamma || !strings.Contains(got.Failures[0].Reason, tt.block) {
					t.Errorf("%s: got %+v, want one failure of %s mentioning %q", c.how, got.Failures, gamma, tt.block)
				}
			}
		})
	}
}

func TestOwnNumbers(t *testing.T) {
	v := tenantView{AffectedRequests: 1840, IncidentID: "WAI-2026-0908", WindowStart: testAsOf, SourceBreakdown: "2 confirmed, 18 probable"}
	got := ownNumbers(v)
	for _, w := range []string{"1840", "1", "840", "2026", "0908", "2", "18", "10", "09", "9", "00", "0"} {
		if !got[w] {
			t.Errorf("%q missing from %s", w, got)
		}
	}
	for _, w := range []string{"40417", "77"} {
		if got[w] {
			t.Errorf("%q in %s", w, got)
		}
	}
	back, ok := parseNumberSet(got.String())
	if !ok || back.String() != got.String() {
		t.Errorf("round trip: %s -> %s", got, back)
	}
}
