package notify

import (
	"context"
	"strings"
	"testing"
)

// Gamma's and Beta's notices are accepted, then redrafted with corrected
// addresses. send reports the corrections and holds them; with Supersede
// each goes out once, as a new message that supersedes the first, and the
// notices that did not change are not sent again.
func TestSupersedeRedraftedNotice(t *testing.T) {
	db, dir := openFixture(t)
	ctx := context.Background()
	inc := testIncident(t, "")
	outbox := t.TempDir()
	first, err := Draft(ctx, db, nil, inc, dir, outbox, testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, nil)
	if _, err := Send(ctx, db, nil, outbox, plainOpts(ts)); err != nil {
		t.Fatal(err)
	}
	sentFirst := len(ts.messages())
	oldGamma, oldBeta := noticeFor(t, first, "t-gamma"), noticeFor(t, first, "t-beta")
	unchanged := map[string]string{}
	for _, n := range first.Notices {
		if n.Status == StatusReady && n.TenantID != "t-gamma" && n.TenantID != "t-beta" {
			unchanged[n.File] = readOutbox(t, outbox, n.File)
		}
	}

	corrected := strings.Replace(fixtureDirectory, "security@gamma.example", "soc@gamma.example", 1)
	corrected = strings.Replace(corrected, "dpo@beta-sante.example", "rgpd@beta-sante.example", 1)
	dir2, err := ParseDirectory([]byte(corrected), "tenants.csv")
	if err != nil {
		t.Fatal(err)
	}
	redraft := func() *DraftResult {
		res, err := Draft(ctx, db, nil, inc, dir2, outbox, testAsOf)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	second := redraft()
	for file, raw := range unchanged {
		if readOutbox(t, outbox, file) != raw {
			t.Errorf("%s changed on a redraft with the same inputs", file)
		}
	}
	for _, c := range []struct {
		old  IndexRow
		line string
	}{
		{oldGamma, "This notice corrects and replaces the notice about incident WAI-2026-0908 we sent you earlier"},
		{oldBeta, "Cette notification corrige et remplace celle que nous vous avons adressée précédemment"},
	} {
		n := noticeFor(t, second, c.old.TenantID)
		p := decodeForTest(t, readOutbox(t, outbox, n.File))
		if n.MessageID == c.old.MessageID || p.header.Get("Message-ID") != n.MessageID {
			t.Errorf("%s: Message-ID %s, first %s", n.File, n.MessageID, c.old.MessageID)
		}
		if p.header.Get("Supersedes") != c.old.MessageID || p.header.Get("References") != c.old.MessageID {
			t.Errorf("%s: Supersedes %q References %q, want %s", n.File, p.header.Get("Supersedes"), p.header.Get("References"), c.old.MessageID)
		}
		if !strings.Contains(p.text, c.line) || !strings.Contains(p.html, strings.ReplaceAll(c.line, "'", "&#39;")) && !strings.Contains(p.html, c.line) {
			t.Errorf("%s: no supersede line in its language:\n%s", n.File, p.text)
		}
		if n.Status != StatusReady {
			t.Errorf("%s: %s %s", n.File, n.Status, n.Reason)
		}
	}

	// Without Supersede: reported, held, nothing sent.
	got, err := Send(ctx, db, nil, outbox, plainOpts(ts))
	if err == nil || !strings.Contains(err.Error(), "--supersede") || len(got.Held) != 2 || got.Sent != 0 || len(ts.messages()) != sentFirst {
		t.Fatalf("without --supersede: %+v %v, server %d", got, err, len(ts.messages()))
	}
	// With it: each correction once, to its corrected address.
	o := plainOpts(ts)
	o.Supersede = true
	got, err = Send(ctx, db, nil, outbox, o)
	if err != nil || got.Sent != 2 || len(ts.messages()) != sentFirst+2 {
		t.Fatalf("with --supersede: %+v %v, server %d", got, err, len(ts.messages()))
	}
	for _, m := range ts.messages()[sentFirst:] {
		if m := strings.Join(m.to, ";"); m != "soc@gamma.example" && m != "rgpd@beta-sante.example" {
			t.Errorf("correction went to %s", m)
		}
	}
	// Done: a rerun sends nothing and says nothing is held; a redraft with
	// the same inputs gives the same correction, already accepted.
	gammaRaw := readOutbox(t, outbox, noticeFor(t, second, "t-gamma").File)
	redraft()
	if readOutbox(t, outbox, noticeFor(t, second, "t-gamma").File) != gammaRaw {
		t.Error("a second redraft changed the correction")
	}
	got, err = Send(ctx, db, nil, outbox, plainOpts(ts))
	if err != nil || got.Sent != 0 || len(got.Held) != 0 || len(ts.messages()) != sentFirst+2 {
		t.Fatalf("rerun: %+v %v", got, err)
	}
}
