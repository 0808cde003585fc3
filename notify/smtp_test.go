package notify

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/leakmap/leakmap/internal/catalog"
)

// received is one message as the test server got it.
type received struct {
	from string
	to   []string
	data string
	user string
}

// testServer is a real SMTP server on 127.0.0.1:0 (go-smtp). With dropAfter
// >= 0, it accepts that many messages, then reads the next one in full,
// records it, and drops the connection without answering (the message in
// flight), and refuses connections until up() is called.
type testServer struct {
	t         testing.TB
	srv       *smtp.Server
	addr      string
	port      int
	mu        sync.Mutex
	msgs      []received
	dropAfter int
	accepted  int
	down      bool
	user      string // when set, AUTH PLAIN with user/pass is required
	pass      string
	refuse    map[string]int // address -> SMTP code its RCPT gets (550, 451)
	rcpts     map[string]int // RCPT attempts per address
}

func startServer(t testing.TB, tlsConf *tls.Config) *testServer {
	t.Helper()
	ts := &testServer{t: t, dropAfter: -1}
	s := smtp.NewServer(smtp.BackendFunc(ts.newSession))
	s.Domain = "localhost"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	s.MaxMessageBytes = 10 << 20
	s.TLSConfig = tlsConf
	s.ErrorLog = discardLogger{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.srv, ts.addr, ts.port = s, l.Addr().String(), l.Addr().(*net.TCPAddr).Port
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return ts
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...interface{}) {}
func (discardLogger) Println(...interface{})        {}

func (ts *testServer) up() {
	ts.mu.Lock()
	ts.down, ts.dropAfter = false, -1
	ts.mu.Unlock()
}

func (ts *testServer) messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.msgs...)
}

func (ts *testServer) newSession(c *smtp.Conn) (smtp.Session, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.down {
		return nil, &smtp.SMTPError{Code: 421, Message: "service not available"}
	}
	return &testSession{ts: ts, conn: c}, nil
}

type testSession struct {
	ts   *testServer
	conn *smtp.Conn
	cur  received
	user string
}

func (s *testSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *testSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.ts.user || password != s.ts.pass {
			return errors.New("bad credentials")
		}
		s.user = username
		return nil
	}), nil
}
func (s *testSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.ts.user != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.cur = received{from: from, user: s.user}
	return nil
}
func (s *testSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.ts.mu.Lock()
	defer s.ts.mu.Unlock()
	if s.ts.rcpts == nil {
		s.ts.rcpts = map[string]int{}
	}
	s.ts.rcpts[to]++
	if code := s.ts.refuse[to]; code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 1, 1}, Message: "mailbox unavailable"}
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}

// refuseRcpt makes the server answer code to RCPT TO addr (0: accept).
func (ts *testServer) refuseRcpt(addr string, code int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.refuse == nil {
		ts.refuse = map[string]int{}
	}
	ts.refuse[addr] = code
}

func (ts *testServer) rcptCount(addr string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.rcpts[addr]
}
func (s *testSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = string(b)
	ts := s.ts
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.msgs = append(ts.msgs, s.cur)
	if ts.dropAfter >= 0 && ts.accepted == ts.dropAfter {
		ts.down = true
		s.conn.Conn().Close() // in flight: stored here, never acknowledged
		return errors.New("dropped")
	}
	ts.accepted++
	return nil
}
func (s *testSession) Reset()        { s.cur = received{} }
func (s *testSession) Logout() error { return nil }

func plainOpts(ts *testServer) SendOptions {
	return SendOptions{Host: "127.0.0.1", Port: ts.port, TLS: "none", Send: true, Timeout: 5 * time.Second}
}

// byMessageID groups what the server received.
func byMessageID(t testing.TB, msgs []received) map[string][]parsedMail {
	out := map[string][]parsedMail{}
	for _, m := range msgs {
		p := decodeForTest(t, m.data)
		out[p.header.Get("Message-ID")] = append(out[p.header.Get("Message-ID")], p)
	}
	return out
}

func ledgerStates(t testing.TB, db *sql.DB) map[string][]string {
	rows, err := db.Query(`SELECT notice_id, recipient, status FROM send_ledger ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{} // "notice address" -> states in order
	for rows.Next() {
		var id, rcpt, st string
		rows.Scan(&id, &rcpt, &st)
		out[id+" "+rcpt] = append(out[id+" "+rcpt], st)
	}
	return out
}

func TestSendDeliversEveryReadyNoticeOnce(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	ctx := context.Background()

	got, err := Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err != nil {
		t.Fatal(err)
	}
	if got.Sent != res.Ready || got.Failed != 0 {
		t.Fatalf("sent %+v, want %d", got, res.Ready)
	}
	msgs := ts.messages()
	if len(msgs) != res.Ready {
		t.Fatalf("server received %d messages, want %d", len(msgs), res.Ready)
	}
	byID := byMessageID(t, msgs)
	dir, _ := ParseDirectory([]byte(fixtureDirectory), "tenants.csv")
	rows := requestRowsByTenant(t, ctx, db)
	for _, n := range res.Notices {
		ps := byID[n.MessageID]
		if n.Status != StatusReady {
			if len(ps) != 0 {
				t.Errorf("%s (%s) was sent", n.File, n.Status)
			}
			continue
		}
		if len(ps) != 1 {
			t.Errorf("%s received %d times", n.File, len(ps))
			continue
		}
		p := ps[0]
		if p.lang != n.Language || p.header.Get("Date") != "Thu, 10 Sep 2026 09:00:00 +0000" {
			t.Errorf("%s: language %q date %q", n.File, p.lang, p.header.Get("Date"))
		}
		if n.Language == "fr" && !strings.Contains(p.text, "Madame, Monsieur") && n.Kind == "tenant" {
			t.Errorf("%s: French notice not in French", n.File)
		}
		if n.Language == "en" && !strings.Contains(p.text, "Dear ") {
			t.Errorf("%s: English notice not in English", n.File)
		}
		if !strings.Contains(p.html, "<html lang=\""+n.Language+"\">") {
			t.Errorf("%s: HTML part missing or wrong language", n.File)
		}
		if n.Kind != "tenant" {
			continue
		}
		e := dir.Lookup(n.TenantID)
		var rcpts []string
		for _, m := range msgs {
			if strings.Contains(m.data, n.MessageID) {
				rcpts = m.to
			}
		}
		if strings.Join(rcpts, ";") != strings.Join(e.Emails, ";") {
			t.Errorf("%s: RCPT %v, want %v", n.File, rcpts, e.Emails)
		}
		to, _ := p.header.AddressList("To")
		if len(to) != len(e.Emails) || to[0].Name != e.Name {
			t.Errorf("%s: To %v", n.File, to)
		}
		csv := attachmentCSV(catalog.Get(n.Language), rows[n.TenantID])
		if want := catalog.Get(n.Language).MustT("attachment.file_name", "id", "WAI-2026-0908"); p.attachment != string(csv) || p.attachmentName != want {
			t.Errorf("%s: attachment %q (%s), want %q", n.File, p.attachment, p.attachmentName, csv)
		}
	}
	// Every address of every sent notice: sending, then accepted with the
	// server's reply.
	for id, states := range ledgerStates(t, db) {
		if strings.Join(states, ",") != "sending,accepted" {
			t.Errorf("%s ledger %v", id, states)
		}
	}
	var reply string
	db.QueryRow(`SELECT server_reply FROM send_ledger WHERE status = 'accepted' LIMIT 1`).Scan(&reply)
	if !strings.HasPrefix(reply, "250") {
		t.Errorf("server reply %q", reply)
	}

	// A rerun sends nothing.
	again, err := Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err != nil {
		t.Fatal(err)
	}
	if again.Sent != 0 || again.AlreadyAccepted != res.Ready || len(ts.messages()) != res.Ready {
		t.Errorf("rerun: %+v, server has %d", again, len(ts.messages()))
	}
}

// The fault test: the server takes 2 messages, then drops the connection
// while the 3rd notice (in notice_id order) is in flight, and refuses
// connections. The run stops with an error; the rerun completes. Every
// notice arrives exactly once, except the 3rd, which arrives twice with the
// same Message-ID: the one in flight.
func TestSendResumesAfterServerDrop(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	ts.dropAfter = 2
	ctx := context.Background()

	first, err := Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err == nil {
		t.Fatal("no error when the server went away")
	}
	if first.Sent != 2 || first.Failed != 1 {
		t.Fatalf("first run: %+v", first)
	}
	ts.up()
	second, err := Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err != nil {
		t.Fatal(err)
	}
	if second.AlreadyAccepted != 2 || second.Sent != res.Ready-2 {
		t.Fatalf("rerun: %+v", second)
	}
	list, _ := loadSendable(ctx, db)
	states, _ := loadLedger(ctx, db)
	inFlight := list[2].MessageID
	byID := byMessageID(t, ts.messages())
	for _, n := range list {
		want := 1
		if n.MessageID == inFlight {
			want = 2
		}
		if len(byID[n.MessageID]) != want {
			t.Errorf("%s received %d times, want %d", n.NoticeID, len(byID[n.MessageID]), want)
		}
		for _, a := range splitAddresses(n.Recipients) {
			if st := states[addrKey{n.NoticeID, a, n.MessageID}]; st.Status != LedgerAccepted {
				t.Errorf("%s %s: last state %s", n.NoticeID, a, st.Status)
			}
		}
	}
	if got := strings.Join(ledgerStates(t, db)[list[2].NoticeID+" "+list[2].Recipients], ","); got != "sending,deferred,sending,accepted" {
		t.Errorf("in-flight notice ledger: %s", got)
	}
	var attempts int
	db.QueryRow(`SELECT max(attempts) FROM send_ledger WHERE notice_id = ?`, list[2].NoticeID).Scan(&attempts)
	if attempts != 2 {
		t.Errorf("attempts %d", attempts)
	}
}

// A crash between "sending" and the server's answer leaves "sending": the
// rerun sends that notice again.
func TestSendRetriesNoticeLeftSending(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	ctx := context.Background()
	list, _ := loadSendable(ctx, db)
	for i, n := range list {
		status := LedgerAccepted
		if i == 0 {
			status = LedgerSending
		}
		for _, a := range splitAddresses(n.Recipients) {
			if err := ledger(ctx, db, n, a, status, 1, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := Send(ctx, db, nil, res.Outbox, plainOpts(ts))
	if err != nil {
		t.Fatal(err)
	}
	if got.Sent != 1 || got.AlreadyAccepted != len(list)-1 {
		t.Fatalf("%+v", got)
	}
	if m := ts.messages(); len(m) != 1 || !strings.Contains(m[0].data, list[0].MessageID) {
		t.Fatalf("server got %d messages", len(m))
	}
}

func TestSendDryRunTouchesNothing(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	o := plainOpts(ts)
	o.Send = false
	got, err := Send(context.Background(), db, nil, res.Outbox, o)
	if err != nil {
		t.Fatal(err)
	}
	if got.DryRun != res.Ready || len(ts.messages()) != 0 || len(ledgerStates(t, db)) != 0 {
		t.Fatalf("dry run: %+v, %d messages", got, len(ts.messages()))
	}
}

func TestSendRefusesFileChangedSinceCheck(t *testing.T) {
	db, res := draftFixture(t)
	ts := startServer(t, nil)
	gamma := noticeFor(t, res, "t-gamma")
	raw := readOutbox(t, res.Outbox, gamma.File)
	writeFile(t, res.Outbox, gamma.File, strings.Replace(raw, "Dear", "Hello", 1))
	dry := plainOpts(ts)
	dry.Send = false
	if got, err := Send(context.Background(), db, nil, res.Outbox, dry); err == nil || got.Failed != 1 || !strings.Contains(err.Error(), "redraft") {
		t.Fatalf("dry run: %+v %v", got, err)
	}
	got, err := Send(context.Background(), db, nil, res.Outbox, plainOpts(ts))
	if err == nil || got.Failed != 1 || got.Sent != res.Ready-1 {
		t.Fatalf("%+v %v", got, err)
	}
	if byID := byMessageID(t, ts.messages()); len(byID[gamma.MessageID]) != 0 {
		t.Error("a changed notice was sent")
	}
}

func TestSendStartTLSWithAuth(t *testing.T) {
	db, res := draftFixture(t)
	serverTLS, clientTLS := selfSignedTLS(t)
	ts := startServer(t, serverTLS)
	ts.user, ts.pass = "leakmap", "s3cret"
	o := SendOptions{Host: "127.0.0.1", Port: ts.port, TLS: "starttls", Username: "leakmap", Password: "wrong",
		Send: true, TLSConfig: clientTLS, Timeout: 5 * time.Second, RatePerSecond: 40}
	if _, err := Send(context.Background(), db, nil, res.Outbox, o); err == nil {
		t.Fatal("a wrong password is accepted")
	}
	if n := len(ledgerStates(t, db)); n != 0 {
		t.Fatalf("ledger rows after a failed login: %d", n)
	}
	o.Password = "s3cret"
	start := time.Now()
	got, err := Send(context.Background(), db, nil, res.Outbox, o)
	if err != nil {
		t.Fatal(err)
	}
	// The rate limit spaces messages at least 1/40 s apart.
	if min := time.Duration(res.Ready-1) * time.Second / 40; time.Since(start) < min {
		t.Errorf("rate limit not applied: %d messages in %v", got.Sent, time.Since(start))
	}
	msgs := ts.messages()
	if got.Sent != res.Ready || len(msgs) != res.Ready || msgs[0].user != "leakmap" {
		t.Fatalf("%+v, %d messages, user %q", got, len(msgs), msgs[0].user)
	}
}

func selfSignedTLS(t testing.TB) (server, client *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// requestRowsByTenant reads every tenant's requests as the draft does.
func requestRowsByTenant(t *testing.T, ctx context.Context, db *sql.DB) map[string][]requestRow {
	t.Helper()
	tenants, err := loadCaseTenants(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	r, err := openRequestRows(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	out := map[string][]requestRow{}
	if err := r.each(tenants, func(i int, rows []requestRow) bool {
		out[tenants[i].ID] = rows
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
