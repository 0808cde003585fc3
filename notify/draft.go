package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/sheetcsv"
	"github.com/leakmap/leakmap/queries"
)

// Notice statuses, in the notices table and index.csv.
const (
	StatusReady        = "ready"
	StatusBlocked      = "blocked"
	StatusCannotNotify = "cannot_notify"
)

// IndexName is the outbox's list of every notice.
const IndexName = "index.csv"

// IndexRow is one notice: a line of index.csv and a row of the notices table.
type IndexRow struct {
	File       string
	NoticeID   string
	Kind       string // tenant | regulator
	TenantID   string // "" for the regulator
	Roles      string // recipient | source | both | self | regulator
	Language   string
	Recipients string // ;-separated
	Status     string // ready | blocked | cannot_notify
	Reason     string
	MessageID  string
	SHA256     string // of the .eml file
}

// DraftResult summarises a draft run. Drafted counts every .eml written,
// whatever its status; Ready = Drafted - Blocked - CannotNotify.
type DraftResult struct {
	Drafted, Ready, Blocked, CannotNotify int
	Outbox                                string
	Notices                               []IndexRow
	Check                                 *CheckResult
}

// caseTenant is one tenant of the analysis with its notice roles.
type caseTenant struct {
	ID                             string
	Affected, Exposed              int
	Recipient, Source, SelfExposed bool
	RecipientTier, SourceTier      string
	FirstTS, LastTS                string
}

type requestRow struct {
	Role, RequestID, TS, Tier string
}

// Draft writes one .eml per notice into outbox (every tenant of the tenants
// table, covering every role it has, and the regulator notice), the
// isolation manifest and index.csv, and rewrites the notices table. It then
// runs the isolation check on every draft: a failing notice is marked
// blocked, with the reason, and can never be sent. asOf is the notices' Date
// and the time the 72-hour deadline is judged against.
//
// Roles: a tenant is a source when one of its requests may have reached
// another tenant, a recipient when one of its responses may hold another
// tenant's data (a cross-tenant exposure, or slots whose owner is unknown),
// and gets one notice covering both. A tenant affected only by its own data
// ("self") gets a notice that its responses are unreliable and should be
// discarded, with none of the cross-tenant wording. The regulator notice is
// addressed to the provider's DPO (else its email), who files it.
func Draft(ctx context.Context, db *sql.DB, logger *slog.Logger, inc *incident.Incident, dir *Directory, outbox string, asOf time.Time) (*DraftResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	asOf = asOf.UTC()
	from, err := mail.ParseAddress(inc.Provider.Email)
	if err != nil || inc.Provider.Email == "" {
		return nil, errs.Usage("incident %s: provider.email: %q is needed as the From address of the notices", inc.Path, inc.Provider.Email)
	}
	from.Name = inc.Provider.Name
	domain := from.Address[strings.LastIndex(from.Address, "@")+1:]
	contact := inc.Provider.DPOEmail
	if contact == "" {
		contact = inc.Provider.Email
	}
	if err := prepareOutbox(outbox); err != nil {
		return nil, err
	}

	tenants, err := loadCaseTenants(ctx, db)
	if err != nil {
		return nil, err
	}
	rows, err := loadRequestRows(ctx, db)
	if err != nil {
		return nil, err
	}
	man, err := buildManifest(ctx, db, dir, inc)
	if err != nil {
		return nil, err
	}

	res := &DraftResult{Outbox: outbox}
	wordings := map[string]wording{}
	for _, lang := range languages {
		wordings[lang] = applyWording(defaultWording(lang, inc), inc.Notices)
	}
	deletion := asOf.Add(14 * 24 * time.Hour)
	if inc.Notices.DeletionDeadline != nil {
		deletion = *inc.Notices.DeletionDeadline
	}
	attachName := safeAttachmentName(inc.ID) + "-requests.csv"

	for _, t := range tenants {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row := IndexRow{Kind: "tenant", TenantID: t.ID, NoticeID: inc.ID + "/tenant/" + t.ID,
			File: tenantFile(t.ID), MessageID: "<" + messageID(inc.ID, t.ID, domain) + ">", Language: "en", Status: StatusReady}
		view := tenantView{
			IncidentID: inc.ID, Title: inc.Title, ProviderName: inc.Provider.Name, Contact: contact,
			WindowStart: incident.Format(inc.WindowStart), WindowEnd: incident.Format(inc.WindowEnd),
			DiscoveredAt: fmtOpt(inc.DiscoveredAt), ContainedAt: fmtOpt(inc.ContainedAt),
			AsOf: incident.Format(asOf), DeletionDeadline: incident.Format(deletion),
			Source: t.Source, Recipient: t.Recipient, SelfOnly: !t.Source && !t.Recipient,
			ExposedRequests: t.Exposed, AffectedRequests: t.Affected,
			SourceTier: t.SourceTier, RecipientTier: t.RecipientTier,
			FirstTS: t.FirstTS, LastTS: t.LastTS, Attachment: attachName,
		}
		row.Roles = rolesOf(t)
		var to []mail.Address
		if e := dir.Lookup(t.ID); e == nil {
			row.Status, row.Reason = StatusCannotNotify, "not in the tenant directory"
		} else {
			row.Language = e.Language
			view.Greeting = e.Name
			if e.Problem != "" {
				row.Status, row.Reason = StatusCannotNotify, e.Problem
			}
			if len(e.Invalid) > 0 && e.Problem == "" {
				row.Reason = "invalid address(es) left out: " + strings.Join(e.Invalid, ";")
			}
			for _, a := range e.Emails {
				to = append(to, mail.Address{Name: e.Name, Address: a})
			}
			row.Recipients = strings.Join(e.Emails, ";")
		}
		view.Lang = row.Language
		w := wordings[row.Language]
		view.DataCategories, view.Consequences, view.MeasuresTaken, view.MeasuresPlanned = w.DataCategories, w.Consequences, w.MeasuresTaken, w.MeasuresPlanned
		csvData, n := attachmentCSV(rows[t.ID])
		view.AttachmentRows = n
		r, err := render("tenant", row.Language, view)
		if err != nil {
			return nil, err
		}
		eml := buildEML(emlSpec{From: *from, To: to, Subject: r.Subject, MessageID: row.MessageID, Date: asOf,
			Lang: row.Language, Text: r.Text, HTML: r.HTML,
			Attachment: &attachment{Name: attachName, ContentType: "text/csv; charset=utf-8", Data: csvData}})
		if err := writeNotice(outbox, &row, eml); err != nil {
			return nil, err
		}
		man.notices[row.File] = ownerKey(t.ID)
		man.files = append(man.files, row.File)
		res.Notices = append(res.Notices, row)
	}

	reg, err := draftRegulator(ctx, db, inc, asOf, from, domain, contact, wordings)
	if err != nil {
		return nil, err
	}
	reg.Reason = "addressed to the provider's contact point, who files it with the supervisory authority"
	if reg.lateBy != "" && inc.Notices.DelayReasons == "" {
		logger.Warn("the regulator notice is late and the incident file gives no reasons (notices.delay_reasons): it uses leakmap's default wording",
			"deadline", reg.deadline, "as_of", incident.Format(asOf))
	}
	eml := reg.eml
	if err := writeNotice(outbox, &reg.IndexRow, eml); err != nil {
		return nil, err
	}
	man.notices[reg.File] = regulatorKey
	man.files = append(man.files, reg.File)
	res.Notices = append(res.Notices, reg.IndexRow)

	if err := man.write(filepath.Join(outbox, manifestName)); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	// The same check as 'notify check', from the files just written.
	check, err := Check(outbox)
	if err != nil {
		return nil, err
	}
	res.Check = check
	failed := map[string]string{}
	for _, f := range check.Failures {
		failed[f.File] = f.Reason
	}
	for i := range res.Notices {
		n := &res.Notices[i]
		if why, bad := failed[n.File]; bad {
			reason := "isolation check: " + why
			if n.Status == StatusCannotNotify {
				reason += "; also cannot notify: " + n.Reason
			}
			n.Status, n.Reason = StatusBlocked, reason
			logger.Warn("notice blocked by the isolation check", "file", n.File, "reason", why)
		}
		res.Drafted++
		switch n.Status {
		case StatusBlocked:
			res.Blocked++
		case StatusCannotNotify:
			res.CannotNotify++
			logger.Warn("cannot notify", "notice", n.NoticeID, "reason", n.Reason)
		default:
			res.Ready++
		}
	}
	if err := writeIndex(filepath.Join(outbox, IndexName), res.Notices); err != nil {
		return nil, err
	}
	if err := storeNotices(ctx, db, res.Notices); err != nil {
		return nil, err
	}
	logger.Info("notices drafted", "outbox", outbox, "drafted", res.Drafted, "ready", res.Ready,
		"blocked", res.Blocked, "cannot_notify", res.CannotNotify)
	return res, nil
}

func rolesOf(t caseTenant) string {
	switch {
	case t.Source && t.Recipient:
		return "both"
	case t.Source:
		return "source"
	case t.Recipient:
		return "recipient"
	default:
		return "self"
	}
}

type regulatorDraft struct {
	IndexRow
	eml      []byte
	deadline string // aware_at + 72h, "" without aware_at
	lateBy   string // "" when the deadline is met
}

func draftRegulator(ctx context.Context, db *sql.DB, inc *incident.Incident, asOf time.Time, from *mail.Address, domain, contact string, wordings map[string]wording) (*regulatorDraft, error) {
	lang := "en"
	if strings.EqualFold(inc.Provider.Country, "FR") {
		lang = "fr"
	}
	v, err := regulatorFigures(ctx, db)
	if err != nil {
		return nil, err
	}
	w := wordings[lang]
	v.IncidentID, v.Title, v.ProviderName, v.ProviderCountry, v.Contact, v.Lang = inc.ID, inc.Title, inc.Provider.Name, inc.Provider.Country, contact, lang
	v.LaunchedAt, v.WindowStart, v.WindowEnd = fmtOpt(inc.LaunchedAt), incident.Format(inc.WindowStart), incident.Format(inc.WindowEnd)
	v.DiscoveredAt, v.AwareAt, v.ContainedAt, v.AsOf = fmtOpt(inc.DiscoveredAt), fmtOpt(inc.AwareAt), fmtOpt(inc.ContainedAt), incident.Format(asOf)
	v.DataCategories, v.Consequences, v.MeasuresTaken, v.MeasuresPlanned = w.DataCategories, w.Consequences, w.MeasuresTaken, w.MeasuresPlanned
	v.DelayReasons = w.DelayReasons
	if inc.AwareAt != nil {
		deadline := inc.AwareAt.Add(72 * time.Hour)
		v.Deadline = incident.Format(deadline)
		v.DeadlineMet = !asOf.After(deadline)
		if !v.DeadlineMet {
			v.LateBy = fmtDuration(asOf.Sub(deadline))
		}
	}
	r, err := render("regulator", lang, v)
	if err != nil {
		return nil, err
	}
	row := IndexRow{File: "regulator.eml", NoticeID: inc.ID + "/regulator", Kind: "regulator", Roles: "regulator",
		Language: lang, Recipients: contact, Status: StatusReady, MessageID: "<" + messageID(inc.ID, regulatorKey, domain) + ">"}
	eml := buildEML(emlSpec{From: *from, To: []mail.Address{inc.Provider.Contact()}, Subject: r.Subject, MessageID: row.MessageID,
		Date: asOf, Lang: lang, Text: r.Text, HTML: r.HTML})
	return &regulatorDraft{IndexRow: row, eml: eml, deadline: v.Deadline, lateBy: v.LateBy}, nil
}

func regulatorFigures(ctx context.Context, db *sql.DB) (regulatorView, error) {
	var v regulatorView
	err := db.QueryRowContext(ctx, queries.Get("notify_regulator_figures")).Scan(
		&v.RecipientTenants, &v.SourceTenants, &v.TenantsTotal, &v.AffectedRequests, &v.ExposedRequests,
		&v.Confirmed, &v.Probable, &v.Possible, &v.SelfExposures, &v.FirstAffected, &v.LastAffected)
	if err != nil {
		return v, fmt.Errorf("regulator figures: %w", err)
	}
	return v, nil
}

func loadCaseTenants(ctx context.Context, db *sql.DB) ([]caseTenant, error) {
	rows, err := db.QueryContext(ctx, queries.Get("notify_tenants"))
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	defer rows.Close()
	var out []caseTenant
	for rows.Next() {
		var t caseTenant
		var first, last sql.NullString
		if err := rows.Scan(&t.ID, &t.Affected, &t.Exposed, &t.Recipient, &t.Source, &t.SelfExposed,
			&t.RecipientTier, &t.SourceTier, &first, &last); err != nil {
			return nil, fmt.Errorf("tenants: %w", err)
		}
		t.FirstTS, t.LastTS = first.String, last.String
		out = append(out, t)
	}
	return out, rows.Err()
}

func loadRequestRows(ctx context.Context, db *sql.DB) (map[string][]requestRow, error) {
	rows, err := db.QueryContext(ctx, queries.Get("notify_request_rows"))
	if err != nil {
		return nil, fmt.Errorf("tenant requests: %w", err)
	}
	defer rows.Close()
	out := map[string][]requestRow{}
	for rows.Next() {
		var tenant string
		var r requestRow
		if err := rows.Scan(&tenant, &r.Role, &r.RequestID, &r.TS, &r.Tier); err != nil {
			return nil, fmt.Errorf("tenant requests: %w", err)
		}
		out[tenant] = append(out[tenant], r)
	}
	return out, rows.Err()
}

// attachmentCSV lists the tenant's own requests: ids, times, role, tier.
func attachmentCSV(rows []requestRow) ([]byte, int) {
	var b bytes.Buffer
	w := sheetcsv.NewWriter(&b)
	w.Write([]string{"request_id", "ts", "role", "tier"})
	for _, r := range rows {
		w.Write([]string{r.RequestID, r.TS, r.Role, r.Tier})
	}
	w.Flush()
	return b.Bytes(), len(rows)
}

// prepareOutbox creates the outbox and removes what an earlier draft left
// there (its notices, index and manifest), and nothing else.
func prepareOutbox(outbox string) error {
	if err := os.MkdirAll(outbox, 0o755); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	entries, err := os.ReadDir(outbox)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && (strings.HasSuffix(n, ".eml") || n == IndexName || n == manifestName) {
			if err := os.Remove(filepath.Join(outbox, n)); err != nil {
				return fmt.Errorf("outbox: %w", err)
			}
		}
	}
	return nil
}

func writeNotice(outbox string, row *IndexRow, eml []byte) error {
	sum := sha256.Sum256(eml)
	row.SHA256 = hex.EncodeToString(sum[:])
	if err := os.WriteFile(filepath.Join(outbox, row.File), eml, 0o644); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

var indexHeader = []string{"file", "notice_id", "kind", "tenant_id", "roles", "language", "recipients", "status", "reason", "message_id", "sha256"}

func writeIndex(path string, rows []IndexRow) error {
	var b bytes.Buffer
	w := sheetcsv.NewWriter(&b)
	w.Write(indexHeader)
	for _, r := range rows {
		w.Write([]string{r.File, r.NoticeID, r.Kind, r.TenantID, r.Roles, r.Language, r.Recipients, r.Status, r.Reason, r.MessageID, r.SHA256})
	}
	w.Flush()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// storeNotices rewrites the notices table; the appender keeps 100,000
// notices to a fraction of a second.
func storeNotices(ctx context.Context, db *sql.DB, rows []IndexRow) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("notices table: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, queries.Get("notify_clear_notices")); err != nil {
		return fmt.Errorf("notices table: %w", err)
	}
	now := time.Now().UTC()
	err = conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppenderWithColumns(dc.(driver.Conn), "", "", "notices",
			[]string{"notice_id", "kind", "tenant_id", "roles", "language", "recipients", "message_id", "file", "status", "reason", "drafted_at", "sha256"})
		if err != nil {
			return err
		}
		for _, r := range rows {
			var tenant driver.Value
			if r.TenantID != "" {
				tenant = r.TenantID
			}
			if err := app.AppendRow(r.NoticeID, r.Kind, tenant, r.Roles, r.Language, r.Recipients, r.MessageID, r.File, r.Status, r.Reason, now, r.SHA256); err != nil {
				app.Close()
				return err
			}
		}
		return app.Close()
	})
	if err != nil {
		return fmt.Errorf("notices table: %w", err)
	}
	return nil
}

// tenantFile names a tenant's notice; ids that are not plain lowercase
// file names get a hash suffix so two ids never share a file.
func tenantFile(id string) string {
	safe := safeName(strings.ToLower(id))
	if safe != id || len(safe) > 80 {
		if len(safe) > 60 {
			safe = safe[:60]
		}
		h := sha256.Sum256([]byte(id))
		safe += "-" + hex.EncodeToString(h[:4])
	}
	return "tenant-" + safe + ".eml"
}

// safeAttachmentName keeps letters, digits, '-', '_' and '.' of s.
func safeAttachmentName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
