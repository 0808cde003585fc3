package notify

import (
	"context"
	"math/rand/v2"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rebuild writes a notice again with one of its parts changed, the way a
// template bug would.
func rebuild(t *testing.T, raw string, edit func(p *parsedMail)) []byte {
	t.Helper()
	p := decodeForTest(t, raw)
	edit(&p)
	from, _ := mail.ParseAddress(p.header.Get("From"))
	to, _ := mail.ParseAddressList(p.header.Get("To"))
	var tos []mail.Address
	for _, a := range to {
		tos = append(tos, *a)
	}
	date, _ := p.header.Date()
	return buildEML(emlSpec{From: *from, To: tos, Subject: p.subject, MessageID: p.header.Get("Message-ID"), Date: date,
		Lang: p.lang, Text: p.text, HTML: p.html,
		Attachment: &attachment{Name: p.attachmentName, ContentType: "text/csv; charset=utf-8", Data: []byte(p.attachment)}})
}

// plantedLeak is an edit of a clean notice, and what the check must say
// of it.
type plantedLeak struct {
	name string
	edit func(p *parsedMail)
	want string
}

// checkPlanted plants each leak alone in the outbox's file (clean: its
// content), checks the outbox each time: one failure, of that file,
// mentioning the leak's want, and puts the clean file back.
func checkPlanted(t *testing.T, outbox, file, clean string, leaks []plantedLeak) {
	t.Helper()
	for _, tt := range leaks {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(outbox, file), rebuild(t, clean, tt.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Check(context.Background(), outbox)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Failures) != 1 || got.Failures[0].File != file || !strings.Contains(got.Failures[0].Reason, tt.want) {
				t.Fatalf("got %+v, want one failure of %s mentioning %q", got.Failures, file, tt.want)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(outbox, file), []byte(clean), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCatchesPlantedLeaks(t *testing.T) {
	idModes(t, func(t *testing.T) {
		_, res := draftFixture(t)
		gamma := noticeFor(t, res, "t-gamma").File
		clean := readOutbox(t, res.Outbox, gamma)
		checkPlanted(t, res.Outbox, gamma, clean, []plantedLeak{
			{"tenant id in text", func(p *parsedMail) { p.text += "\nSee also T-Alpha.\n" }, "text/plain part, word"},
			{"request id in attachment", func(p *parsedMail) { p.attachment += "r-a1,2026-09-01T10:00:00Z,exposed,confirmed\n" }, "another tenant's request id"},
			{"trigger id of another tenant", func(p *parsedMail) { p.text += "\nrelated: r-d9\n" }, "another tenant's request id"},
			{"name with accent in html", func(p *parsedMail) { p.html += "<p>Bêta&nbsp;Santé</p>" }, "another tenant's name"},
			{"email in html attribute", func(p *parsedMail) { p.html += `<a href="mailto:legal@alpha.example">x</a>` }, "text/html part (markup)"},
			{"email in subject", func(p *parsedMail) { p.subject += " (cc dpo@beta-sante.example)" }, "headers, word"},
			{"id split by a tag", func(p *parsedMail) { p.html += "<p>t<b>-</b>delta</p>" }, "another tenant's tenant id"},
			{"logged text fragment", func(p *parsedMail) { p.text += "\nQuote: Alpha confidential merger plan, with Globex numbers.\n" }, "logged text (prompt or response)"},
			{"short logged text of another request", func(p *parsedMail) { p.attachment += "note: epsilon own words only here today\n" }, "logged text"},
			{"directory-only tenant", func(p *parsedMail) { p.text += "\nUnused Ltd\n" }, "another tenant's name"},
		})
		// The untouched notice passes again: the check does not flag the
		// tenant's own identifiers.
		if got, _ := Check(context.Background(), res.Outbox); len(got.Failures) != 0 {
			t.Fatalf("clean outbox fails: %+v", got.Failures)
		}
	})
}

func TestCheckOwnIdentifiersAreNotLeaks(t *testing.T) {
	idModes(t, func(t *testing.T) {
		_, res := draftFixture(t)
		gamma := noticeFor(t, res, "t-gamma").File
		clean := readOutbox(t, res.Outbox, gamma)
		// Gamma's own id, name and request ids may appear in its own notice.
		edited := rebuild(t, clean, func(p *parsedMail) { p.text += "\nt-gamma Gamma Games r-g1 r-g2 security@gamma.example\n" })
		os.WriteFile(filepath.Join(res.Outbox, gamma), edited, 0o644)
		if got, _ := Check(context.Background(), res.Outbox); len(got.Failures) != 0 {
			t.Fatalf("own identifiers flagged: %+v", got.Failures)
		}
	})
}

func TestCheckOutboxIntegrity(t *testing.T) {
	_, res := draftFixture(t)
	// A stray notice the manifest does not know, and a missing one.
	os.WriteFile(filepath.Join(res.Outbox, "stray.eml"), []byte(readOutbox(t, res.Outbox, "regulator.eml")), 0o644)
	os.Remove(filepath.Join(res.Outbox, noticeFor(t, res, "t-alpha").File))
	got, err := Check(context.Background(), res.Outbox)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, f := range got.Failures {
		reasons[f.File] = f.Reason
	}
	if !strings.Contains(reasons["stray.eml"], "not listed") || !strings.Contains(reasons[noticeFor(t, res, "t-alpha").File], "missing") || len(got.Failures) != 2 {
		t.Fatalf("got %+v", got.Failures)
	}
	os.WriteFile(filepath.Join(res.Outbox, manifestName), []byte("something else\n"), 0o644)
	if _, err := Check(context.Background(), res.Outbox); err == nil {
		t.Fatal("a bad manifest is accepted")
	}
}

// Wording in the incident file that names a tenant makes Draft block every
// notice but that tenant's own: blocked notices are never sent, and the
// reason says why.
func TestDraftBlocksLeakingNotice(t *testing.T) {
	idModes(t, func(t *testing.T) {
		db, dir := openFixture(t)
		inc := testIncident(t, "notices: {en: {measures_taken: [\"asked Alpha Analytics to help\"]}, fr: {measures_taken: [\"aide demandée à Alpha Analytics\"]}}\n")
		res, err := Draft(context.Background(), db, nil, inc, dir, filepath.Join(t.TempDir(), "outbox"), testAsOf)
		if err != nil {
			t.Fatal(err)
		}
		if a := noticeFor(t, res, "t-alpha"); a.Status != StatusReady {
			t.Errorf("alpha's own name blocks its own notice: %q", a.Reason)
		}
		for _, tenant := range []string{"t-gamma", "t-zeta", ""} {
			n := noticeFor(t, res, tenant)
			if n.Status != StatusBlocked || !strings.Contains(n.Reason, "another tenant's name") {
				t.Errorf("%s: %s %q", n.File, n.Status, n.Reason)
			}
		}
		if z := noticeFor(t, res, "t-zeta"); !strings.Contains(z.Reason, "also cannot notify: not in the tenant directory") {
			t.Errorf("zeta loses its cannot-notify reason: %q", z.Reason)
		}
		if res.Blocked != 7 || res.Ready != 1 {
			t.Errorf("blocked %d ready %d", res.Blocked, res.Ready)
		}
		var status, reason string
		db.QueryRow(`SELECT status, reason FROM notices WHERE tenant_id = 't-gamma'`).Scan(&status, &reason)
		if status != StatusBlocked || reason != noticeFor(t, res, "t-gamma").Reason {
			t.Errorf("notices table: %s %q", status, reason)
		}
		// Send only ever considers ready notices.
		sr, err := Send(context.Background(), db, nil, res.Outbox, SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sr.DryRun != 1 {
			t.Errorf("dry run would send %d, want 1", sr.DryRun)
		}
	})
}

// A long logged text keeps winnowed shingles only, yet any 13-word run of
// it (winnowWindow+shingleWords-1) quoted in a notice is caught.
func TestCheckCatchesRunsOfLongText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	ws := make([]string, 5000)
	for i := range ws {
		ws[i] = randWord(r, 3+r.IntN(5), "abcdefghijklmnopqrstuvwxyz")
	}
	m := newManifest()
	m.addText(newHasher(), strings.Join(ws, " "))
	shingles := len(ws) - shingleWords + 1
	if kept := m.textb.added; kept == 0 || kept*2 > int64(shingles) {
		t.Fatalf("kept %d of %d shingles", kept, shingles)
	}
	if err := m.sealTexts(""); err != nil {
		t.Fatal(err)
	}
	m.notices["n.eml"] = regulatorKey
	c := newChecker(m)
	run := winnowWindow + shingleWords - 1
	for off := 0; off+run <= len(ws); off += 97 {
		eml := buildEML(emlSpec{From: mail.Address{Address: "a@b.example"}, Subject: "s", MessageID: "<x@y>", Lang: "en",
			Text: "Dear customer,\nquote: " + strings.Join(ws[off:off+run], " ") + "\nend\n", HTML: "<p>x</p>"})
		if got := c.checkMessage(eml, regulatorKey, nil); len(got) != 1 || !strings.Contains(got[0], "logged text") {
			t.Fatalf("offset %d: %v", off, got)
		}
	}
}
