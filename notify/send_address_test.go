package notify

import (
	"context"
	"strings"
	"testing"
)

// One of alpha's two addresses answers 550: the other still gets the
// notice, the 550 is kept with the server's reply and not retried; a rerun
// sends nothing. A 451 on gamma's only address leaves gamma undelivered
// (an error naming it) and is retried on the next run.
func TestSendPerAddress(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	ts.refuseRcpt("legal@alpha.example", 550)
	ts.refuseRcpt("security@gamma.example", 451)
	ctx := context.Background()
	alpha, gamma := noticeFor(t, res, "t-alpha"), noticeFor(t, res, "t-gamma")

	got, err := Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err == nil || !strings.Contains(err.Error(), "1 notice(s) accepted by none") {
		t.Fatalf("first run: %v", err)
	}
	if got.Sent != res.Ready-1 || got.Failed != 1 || got.Rejected != 1 || got.Deferred != 1 ||
		len(got.Undelivered) != 1 || got.Undelivered[0].TenantID != "t-gamma" || !strings.Contains(got.Undelivered[0].Reason, "451") {
		t.Fatalf("first run: %+v", got)
	}
	byID := byMessageID(t, ts.messages())
	if len(byID[alpha.MessageID]) != 1 || len(byID[gamma.MessageID]) != 0 {
		t.Fatalf("alpha got %d copies, gamma %d", len(byID[alpha.MessageID]), len(byID[gamma.MessageID]))
	}
	for _, m := range ts.messages() {
		if strings.Contains(m.data, alpha.MessageID) && strings.Join(m.to, ";") != "ops@alpha.example" {
			t.Errorf("alpha's notice went to %v", m.to)
		}
	}
	states := ledgerStates(t, db)
	if s := strings.Join(states[alpha.NoticeID+" ops@alpha.example"], ","); s != "sending,accepted" {
		t.Errorf("ops@alpha: %s", s)
	}
	if s := strings.Join(states[alpha.NoticeID+" legal@alpha.example"], ","); s != "sending,rejected" {
		t.Errorf("legal@alpha: %s", s)
	}
	var reply string
	db.QueryRow(`SELECT server_reply FROM send_ledger WHERE recipient = 'legal@alpha.example' AND status = 'rejected'`).Scan(&reply)
	if !strings.HasPrefix(reply, "550") || !strings.Contains(reply, "mailbox unavailable") {
		t.Errorf("rejected reply %q", reply)
	}

	// Rerun, the server unchanged: nothing to ops or legal again, gamma's
	// 451 retried (and deferred again).
	got, err = Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err == nil || got.Sent != 0 || got.AlreadyAccepted != res.Ready-1 || got.Failed != 1 {
		t.Fatalf("second run: %+v %v", got, err)
	}
	if ts.rcptCount("ops@alpha.example") != 1 || ts.rcptCount("legal@alpha.example") != 1 || ts.rcptCount("security@gamma.example") != 2 {
		t.Errorf("RCPT attempts: ops %d legal %d gamma %d", ts.rcptCount("ops@alpha.example"), ts.rcptCount("legal@alpha.example"), ts.rcptCount("security@gamma.example"))
	}

	// Gamma's server recovers: delivered, exit clean; legal stays rejected.
	ts.refuseRcpt("security@gamma.example", 0)
	got, err = Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err != nil || got.Sent != 1 || got.Failed != 0 {
		t.Fatalf("third run: %+v %v", got, err)
	}
	if len(byMessageID(t, ts.messages())[gamma.MessageID]) != 1 || ts.rcptCount("legal@alpha.example") != 1 {
		t.Error("gamma not delivered once, or legal retried")
	}

	// --retry-permanent tries legal again, and only legal.
	ts.refuseRcpt("legal@alpha.example", 0)
	o := plainOpts(ts)
	o.RetryPermanent = true
	got, err = Send(ctx, db, nil, res.Outbox, o)
	if err != nil || got.Sent != 1 || ts.rcptCount("legal@alpha.example") != 2 || ts.rcptCount("ops@alpha.example") != 1 {
		t.Fatalf("retry permanent: %+v %v (legal %d, ops %d)", got, err, ts.rcptCount("legal@alpha.example"), ts.rcptCount("ops@alpha.example"))
	}
	last := ts.messages()[len(ts.messages())-1]
	if strings.Join(last.to, ";") != "legal@alpha.example" || !strings.Contains(last.data, alpha.MessageID) {
		t.Errorf("retry went to %v", last.to)
	}
}

// A notice whose every address answers 550 is undelivered and stays so
// without --retry-permanent: every run says so, none sends again.
func TestSendAllRejected(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	ts.refuseRcpt("security@gamma.example", 550)
	for run := 0; run < 2; run++ {
		got, err := Send(context.Background(), db, nil, res.Outbox, plainOpts(ts))
		if err == nil || got.Failed != 1 || got.Undelivered[0].TenantID != "t-gamma" || !strings.Contains(got.Undelivered[0].Reason, "550") {
			t.Fatalf("run %d: %+v %v", run, got, err)
		}
	}
	if n := ts.rcptCount("security@gamma.example"); n != 1 {
		t.Errorf("a 550 address got %d RCPTs", n)
	}
}
