package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/queries"
)

// Ledger statuses.
const (
	LedgerSending  = "sending"
	LedgerAccepted = "accepted"
	LedgerFailed   = "failed"
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
	TLSConfig          *tls.Config   // optional: a private CA, or tests
	Timeout            time.Duration // per SMTP exchange; 0: 30s
}

// SendResult counts what one run did.
type SendResult struct {
	Sent, AlreadyAccepted, Failed, DryRun int
}

type sendable struct {
	NoticeID, Recipients, MessageID, File, SHA256, LastStatus string
	Attempts                                                  int
}

// Send sends every ready notice of the case not yet recorded as accepted
// in the send ledger, and never one that is. Each SMTP transaction is
// preceded by a "sending" row and followed by "accepted" (with the server's
// reply) or "failed": a crash between the two leaves "sending", and a rerun
// sends that notice again with the same Message-ID. Blocked and
// cannot-notify notices are never sent; neither is a file changed since its
// isolation check (its SHA-256 no longer matches the notices table).
func Send(ctx context.Context, db *sql.DB, logger *slog.Logger, outbox string, opts SendOptions) (*SendResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	list, err := loadSendable(ctx, db)
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
	for _, n := range list {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if n.LastStatus == LedgerAccepted {
			res.AlreadyAccepted++
			continue
		}
		data, err := os.ReadFile(filepath.Join(outbox, n.File))
		if err != nil {
			return res, fmt.Errorf("outbox: %w", err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != n.SHA256 {
			res.Failed++
			logger.Error("notice changed since its isolation check; not sent (redraft)", "notice", n.NoticeID, "file", n.File)
			if opts.Send {
				if err := ledger(ctx, db, n, LedgerFailed, n.Attempts, "not sent: file changed since the isolation check"); err != nil {
					return res, err
				}
			}
			continue
		}
		if !opts.Send {
			res.DryRun++
			logger.Info("dry run: would send", "notice", n.NoticeID, "file", n.File, "message_id", n.MessageID)
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
		attempt := n.Attempts + 1
		if err := ledger(ctx, db, n, LedgerSending, attempt, ""); err != nil {
			return res, err
		}
		reply, sendErr := s.send(from, strings.Split(n.Recipients, ";"), data)
		if sendErr != nil {
			res.Failed++
			logger.Error("send failed", "notice", n.NoticeID, "err", sendErr)
			s.drop() // the next notice starts on a fresh connection
			if err := ledger(ctx, db, n, LedgerFailed, attempt, sendErr.Error()); err != nil {
				return res, err
			}
			continue
		}
		res.Sent++
		logger.Debug("accepted", "notice", n.NoticeID, "reply", reply)
		if err := ledger(ctx, db, n, LedgerAccepted, attempt, reply); err != nil {
			return res, err
		}
	}
	if res.Failed > 0 && !opts.Send {
		return res, fmt.Errorf("%d notice(s) changed since their isolation check and would not be sent; redraft them", res.Failed)
	}
	if res.Failed > 0 {
		return res, fmt.Errorf("%d notice(s) not accepted; rerun 'leakmap notify send --send' to retry them (accepted ones are never sent again)", res.Failed)
	}
	return res, nil
}

func loadSendable(ctx context.Context, db *sql.DB) ([]sendable, error) {
	rows, err := db.QueryContext(ctx, queries.Get("notify_sendable"))
	if err != nil {
		return nil, fmt.Errorf("notices: %w", err)
	}
	defer rows.Close()
	var out []sendable
	for rows.Next() {
		var n sendable
		if err := rows.Scan(&n.NoticeID, &n.Recipients, &n.MessageID, &n.File, &n.SHA256, &n.LastStatus, &n.Attempts); err != nil {
			return nil, fmt.Errorf("notices: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func ledger(ctx context.Context, db *sql.DB, n sendable, status string, attempts int, reply string) error {
	if _, err := db.ExecContext(ctx, queries.Get("notify_ledger_insert"), n.NoticeID, n.Recipients, n.MessageID,
		status, attempts, reply, time.Now().UTC()); err != nil {
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

// send runs one SMTP transaction and returns the server's reply to DATA.
func (s *smtpSender) send(from string, rcpts []string, data []byte) (string, error) {
	if err := s.conn.Mail(from); err != nil {
		return "", fmt.Errorf("MAIL FROM: %w", err)
	}
	for _, r := range rcpts {
		if err := s.conn.Rcpt(r); err != nil {
			return "", fmt.Errorf("RCPT TO %s: %w", r, err)
		}
	}
	w, err := s.conn.Data()
	if err != nil {
		return "", fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return "", fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("end of DATA: %w", err)
	}
	reply := "250"
	if d, ok := w.(*smtp.DataCloser); ok && d.ServerResponse() != "" {
		reply = "250 " + d.ServerResponse()
	}
	return reply, nil
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
