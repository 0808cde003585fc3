package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/queries"
)

// Ledger statuses, per address.
const (
	LedgerSending  = "sending"
	LedgerAccepted = "accepted"
	LedgerDeferred = "deferred" // 4xx, or no answer: retried on the next run
	LedgerRejected = "rejected" // 5xx: recorded with the reply, retried only with RetryPermanent
	ledgerFailed   = "failed"   // older cases' word for a failure: retried like deferred
)

// SendOptions configures an SMTP send. Send false is a dry run: nothing is
// sent and the ledger is not touched.
type SendOptions struct {
	Host               string
	Port               int // 0: 587 for starttls, 465 for tls, 25 for none
	Username, Password string
	TLS                string // starttls (default) | tls | none
	From               string // envelope sender; "" uses each notice's From
	RatePerSecond      float64
	Send               bool
	RetryPermanent     bool          // send again to addresses that answered 5xx
	Supersede          bool          // send corrections of notices already accepted (see supersede.go)
	TLSConfig          *tls.Config   // optional: a private CA, or tests
	Timeout            time.Duration // per SMTP exchange; 0: 30s
}

// SendResult counts what one run did. Sent, AlreadyAccepted and Failed
// count notices; Deferred and Rejected count addresses of this run.
// Undelivered lists the notices no address of which has accepted them.
type SendResult struct {
	Sent, AlreadyAccepted, Failed, DryRun int
	Deferred, Rejected                    int
	Undelivered                           []Undelivered
	// Held: corrections of notices an earlier version of which was
	// accepted, not sent without Supersede.
	Held []Undelivered
}

// Undelivered is a notice that no address has accepted, with why.
type Undelivered struct {
	NoticeID, TenantID, File string
	Reason                   string // each address's last answer, or why it was not sent
}

type sendable struct {
	NoticeID, TenantID, Recipients, MessageID, File, SHA256 string
}

// addrState is the latest ledger state of one address for one message.
type addrState struct {
	Status, Reply, SHA256 string
	Attempts              int
}

type addrKey struct{ notice, addr, messageID string }

// Send sends every ready notice of the case to each of its addresses not
// yet recorded as having accepted it, and never again to one that has.
// Each SMTP transaction is preceded by a "sending" row per address and
// followed by each address's answer: "accepted" (with the server's reply),
// "deferred" (4xx, or no answer: retried on the next run) or "rejected"
// (5xx: kept with the reply, retried only with RetryPermanent). A crash
// between the two leaves "sending", and a rerun sends to that address again
// with the same Message-ID. A notice is delivered when at least one of its
// addresses accepted it; Send returns an error while a notice has none.
// Blocked and cannot-notify notices are never sent; neither is a file
// changed since its isolation check (its SHA-256 no longer matches the
// notices table).
func Send(ctx context.Context, db *sql.DB, logger *slog.Logger, outbox string, opts SendOptions) (*SendResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	list, err := loadSendable(ctx, db)
	if err != nil {
		return nil, err
	}
	states, err := loadLedger(ctx, db)
	if err != nil {
		return nil, err
	}
	versions, err := loadAcceptedVersions(ctx, db)
	if err != nil {
		return nil, err
	}
	res := &SendResult{}
	var s *smtpSender
	if opts.Send {
		if opts.Host == "" {
			return nil, errs.Usage("smtp: no host (--smtp-host or LEAKMAP_SMTP_HOST)")
		}
		s, err = newSMTPSender(opts)
		if err != nil {
			return nil, err
		}
		defer s.close()
	}
	var interval time.Duration
	if opts.RatePerSecond > 0 {
		interval = time.Duration(float64(time.Second) / opts.RatePerSecond)
	}
	var next time.Time
	changed := 0
	for _, n := range list {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		addrs := splitAddresses(n.Recipients)
		var pending []string
		accepted := false
		var answers []string
		for _, a := range addrs {
			st := states[addrKey{n.NoticeID, a, n.MessageID}]
			switch {
			case st.Status == LedgerAccepted:
				accepted = true
			case st.Status == LedgerRejected && !opts.RetryPermanent:
				answers = append(answers, a+": "+st.Reply)
			default:
				pending = append(pending, a)
			}
		}
		undelivered := func(reason string) {
			res.Failed++
			res.Undelivered = append(res.Undelivered, Undelivered{n.NoticeID, n.TenantID, n.File, reason})
		}
		if !accepted && !opts.Supersede && len(versions[n.NoticeID]) > 0 &&
			!slices.ContainsFunc(versions[n.NoticeID], func(v acceptedVersion) bool { return v.messageID == n.MessageID }) {
			earlier := versions[n.NoticeID][len(versions[n.NoticeID])-1].messageID
			res.Held = append(res.Held, Undelivered{n.NoticeID, n.TenantID, n.File,
				"redrafted with other content after " + earlier + " was accepted: a correction, sent only with --supersede"})
			logger.Warn("a corrected notice supersedes one already accepted; not sent without --supersede", "notice", n.NoticeID, "file", n.File, "supersedes", earlier)
			continue
		}
		if len(pending) == 0 {
			if accepted {
				res.AlreadyAccepted++
			} else {
				undelivered(strings.Join(answers, "; ") + " (permanent; --retry-permanent sends again)")
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(outbox, n.File))
		if err != nil {
			return res, fmt.Errorf("outbox: %w", err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != n.SHA256 {
			changed++
			logger.Error("notice changed since its isolation check; not sent (redraft)", "notice", n.NoticeID, "file", n.File)
			if !accepted {
				undelivered("not sent: file changed since the isolation check; redraft")
			}
			continue
		}
		if !opts.Send {
			res.DryRun++
			logger.Info("dry run: would send", "notice", n.NoticeID, "file", n.File, "to", strings.Join(pending, ";"), "message_id", n.MessageID)
			continue
		}
		if interval > 0 {
			if wait := time.Until(next); wait > 0 {
				select {
				case <-ctx.Done():
					return res, ctx.Err()
				case <-time.After(wait):
				}
			}
			next = time.Now().Add(interval)
		}
		from := opts.From
		if from == "" {
			from, err = headerFrom(data)
			if err != nil {
				return res, fmt.Errorf("%s: %w", n.File, err)
			}
		}
		if err := s.connect(ctx); err != nil {
			return res, fmt.Errorf("smtp: connect to %s: %w", s.addr(), err)
		}
		for _, a := range pending {
			st := states[addrKey{n.NoticeID, a, n.MessageID}]
			if err := ledger(ctx, db, n, a, LedgerSending, st.Attempts+1, ""); err != nil {
				return res, err
			}
		}
		results, sendErr := s.send(from, pending, data)
		if sendErr != nil {
			logger.Error("send failed", "notice", n.NoticeID, "err", sendErr)
			s.drop() // the next notice starts on a fresh connection
		}
		acceptedNow := false
		for _, a := range pending {
			r, ok := results[a]
			if !ok { // no answer for it: the transaction broke off
				r = rcptResult{LedgerDeferred, "no answer"}
				if sendErr != nil {
					r.reply = sendErr.Error()
				}
			}
			st := states[addrKey{n.NoticeID, a, n.MessageID}]
			if err := ledger(ctx, db, n, a, r.status, st.Attempts+1, r.reply); err != nil {
				return res, err
			}
			switch r.status {
			case LedgerAccepted:
				acceptedNow = true
				logger.Debug("accepted", "notice", n.NoticeID, "to", a, "reply", r.reply)
			case LedgerRejected:
				res.Rejected++
				answers = append(answers, a+": "+r.reply)
				logger.Warn("address rejected the notice (permanent)", "notice", n.NoticeID, "to", a, "reply", r.reply)
			default:
				res.Deferred++
				answers = append(answers, a+": "+r.reply)
				logger.Warn("address deferred the notice (retried on the next run)", "notice", n.NoticeID, "to", a, "reply", r.reply)
			}
		}
		switch {
		case acceptedNow:
			res.Sent++
		case accepted:
			res.AlreadyAccepted++
		default:
			undelivered(strings.Join(answers, "; "))
		}
	}
	if changed > 0 && !opts.Send {
		return res, fmt.Errorf("%d notice(s) changed since their isolation check and would not be sent; redraft them", changed)
	}
	if len(res.Held) > 0 && res.Failed == 0 {
		return res, fmt.Errorf("%d notice(s) redrafted with other content after an earlier version was accepted; read them, then send them with --supersede (each goes out as a new message that says it supersedes the first)", len(res.Held))
	}
	if res.Failed > 0 {
		return res, fmt.Errorf("%d notice(s) accepted by none of their addresses; rerun 'leakmap notify send --send' to retry the temporary failures (addresses that accepted are never sent again; permanent rejections only with --retry-permanent)", res.Failed)
	}
	return res, nil
}

// splitAddresses splits a notice's ;-separated recipients.
func splitAddresses(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func loadSendable(ctx context.Context, db *sql.DB) ([]sendable, error) {
	var out []sendable
	err := eachRow(ctx, db, "notify_sendable", func(rows *sql.Rows) error {
		var n sendable
		err := rows.Scan(&n.NoticeID, &n.TenantID, &n.Recipients, &n.MessageID, &n.File, &n.SHA256)
		out = append(out, n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("notices: %w", err)
	}
	return out, nil
}

// loadLedger reads the latest state of every (notice, address, message).
// A row of an older case names every address of the notice at once: it
// stands for each of them.
func loadLedger(ctx context.Context, db *sql.DB) (map[addrKey]addrState, error) {
	out := map[addrKey]addrState{}
	err := eachRow(ctx, db, "notify_ledger_latest", func(rows *sql.Rows) error {
		var notice, rcpt, msgID string
		var st addrState
		if err := rows.Scan(&notice, &rcpt, &msgID, &st.Status, &st.Attempts, &st.Reply, &st.SHA256); err != nil {
			return err
		}
		if st.Status == ledgerFailed {
			st.Status = LedgerDeferred
		}
		for _, a := range splitAddresses(rcpt) {
			k := addrKey{notice, a, msgID}
			if old, ok := out[k]; !ok || old.Status != LedgerAccepted {
				out[k] = st
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("send ledger: %w", err)
	}
	return out, nil
}

func ledger(ctx context.Context, db *sql.DB, n sendable, addr, status string, attempts int, reply string) error {
	if _, err := db.ExecContext(ctx, queries.Get("notify_ledger_insert"), n.NoticeID, addr, n.MessageID,
		status, attempts, reply, time.Now().UTC(), n.SHA256); err != nil {
		return fmt.Errorf("send ledger: %w", err)
	}
	return nil
}

// headerFrom reads the address of a message's From header.
func headerFrom(data []byte) (string, error) {
	end := bytes.Index(data, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(data)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(append(data[:end:end], "\r\n\r\n"...)))
	if err != nil {
		return "", err
	}
	a, err := mail.ParseAddress(msg.Header.Get("From"))
	if err != nil {
		return "", fmt.Errorf("from header: %w", err)
	}
	return a.Address, nil
}

// smtpSender keeps one SMTP connection open across notices and reconnects
// after a failure. go-mail dials, negotiates TLS and authenticates; the
// message bytes are written as drafted, so what was checked is what is sent.
type smtpSender struct {
	client  *gomail.Client
	conn    *smtp.Client
	timeout time.Duration
}

func newSMTPSender(o SendOptions) (*smtpSender, error) {
	mode := strings.ToLower(o.TLS)
	if mode == "" {
		mode = "starttls"
	}
	port := o.Port
	var opts []gomail.Option
	switch mode {
	case "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
		if port == 0 {
			port = 587
		}
	case "tls":
		opts = append(opts, gomail.WithSSL())
		if port == 0 {
			port = 465
		}
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
		if port == 0 {
			port = 25
		}
	default:
		return nil, errs.Usage("smtp tls mode %q: want starttls, tls or none", o.TLS)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	opts = append(opts, gomail.WithPort(port), gomail.WithTimeout(timeout))
	if o.TLSConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(o.TLSConfig))
	}
	if o.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(o.Username), gomail.WithPassword(o.Password))
	}
	c, err := gomail.NewClient(o.Host, opts...)
	if err != nil {
		return nil, errs.Usage("smtp: %w", err)
	}
	return &smtpSender{client: c, timeout: timeout}, nil
}

func (s *smtpSender) addr() string { return s.client.ServerAddr() }

func (s *smtpSender) connect(ctx context.Context) error {
	if s.conn != nil && s.conn.HasConnection() {
		return s.conn.UpdateDeadline(s.timeout)
	}
	c, err := s.client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return err
	}
	s.conn = c
	return nil
}

// rcptResult is one address's answer: a ledger status and the reply.
type rcptResult struct{ status, reply string }

// classify turns an SMTP error into a ledger status: 5xx permanent, 4xx
// (and anything without a code) temporary.
func classify(err error) rcptResult {
	var te *textproto.Error
	if errors.As(err, &te) {
		reply := fmt.Sprintf("%d %s", te.Code, te.Msg)
		if te.Code >= 500 && te.Code < 600 {
			return rcptResult{LedgerRejected, reply}
		}
		return rcptResult{LedgerDeferred, reply}
	}
	return rcptResult{LedgerDeferred, err.Error()}
}

func smtpCode(err error) bool {
	var te *textproto.Error
	return errors.As(err, &te)
}

// send runs one SMTP transaction to every address that takes its RCPT,
// and returns each address's answer. An address refused at RCPT does not
// stop the others. The error is set when the transaction broke off (no
// connection, no answer): addresses without a result then have none.
func (s *smtpSender) send(from string, rcpts []string, data []byte) (map[string]rcptResult, error) {
	out := map[string]rcptResult{}
	if err := s.conn.Mail(from); err != nil {
		return out, fmt.Errorf("MAIL FROM: %w", err)
	}
	var ok []string
	for _, r := range rcpts {
		err := s.conn.Rcpt(r)
		switch {
		case err == nil:
			ok = append(ok, r)
		case smtpCode(err):
			out[r] = classify(err)
		default:
			return out, fmt.Errorf("RCPT TO %s: %w", r, err)
		}
	}
	if len(ok) == 0 {
		if err := s.conn.Reset(); err != nil {
			return out, fmt.Errorf("RSET: %w", err)
		}
		return out, nil
	}
	all := func(r rcptResult) {
		for _, a := range ok {
			out[a] = r
		}
	}
	w, err := s.conn.Data()
	if err != nil {
		if smtpCode(err) {
			all(classify(err))
			return out, s.conn.Reset()
		}
		return out, fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return out, fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		if smtpCode(err) {
			all(classify(err))
			return out, nil
		}
		return out, fmt.Errorf("end of DATA: %w", err)
	}
	reply := "250"
	if d, ok := w.(*smtp.DataCloser); ok && d.ServerResponse() != "" {
		reply = "250 " + d.ServerResponse()
	}
	all(rcptResult{LedgerAccepted, reply})
	return out, nil
}

// drop abandons the connection after a failure.
func (s *smtpSender) drop() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *smtpSender) close() {
	if s.conn != nil {
		s.conn.Quit()
		s.conn.Close()
		s.conn = nil
	}
}
