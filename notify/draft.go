package notify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/internal/filing"
	"github.com/leakmap/leakmap/internal/memwatch"
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
	// ownNumbers is the numbers the notice's own facts write (numberSet's
	// String form), for the isolation manifest and the notices table.
	ownNumbers string
}

// DraftResult summarises a draft run. Drafted counts every .eml written,
// whatever its status; Ready = Drafted - Blocked - CannotNotify.
type DraftResult struct {
	Drafted, Ready, Blocked, CannotNotify int
	Outbox                                string
	Notices                               []IndexRow
	Check                                 *CheckResult
	// Tenant counts the tenant notices alone, as the regulator notice and
	// the Regulator sheet state them; Regulator is the regulator notice.
	Tenant    filing.Notices
	Regulator IndexRow
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
	Role, RequestID, TS, Tier string // Tier: the strongest cross-tenant tier, or unknown | none
	Own                       bool   // an affected request whose memory also held the tenant's own requests
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
	// The notices name one contact, and replies go there (Reply-To): the
	// DPO, else the provider's security contact.
	replyTo := inc.Provider.Contact()
	contact, contactIsDPO := replyTo.Address, inc.Provider.DPOEmail != ""
	earlier, err := prepareOutbox(outbox)
	if err != nil {
		return nil, err
	}

	// The tenants are read, and their requests' query started, on another
	// connection while the identities are stored and the manifest is
	// built from them: each is a second or so of one core at 100,000
	// tenants. The requests are read as the notices are drafted.
	var (
		tenants []caseTenant
		reqRows *requestRows
		loadErr error
		loaded  = make(chan struct{})
	)
	// A pool held to one connection (db.SetMaxOpenConns(1)) cannot keep
	// the requests' query open beside the manifest's: there it is opened
	// once the manifest is built.
	early := db.Stats().MaxOpenConnections != 1
	go func() {
		defer close(loaded)
		if tenants, loadErr = loadCaseTenants(ctx, db); loadErr == nil && early {
			reqRows, loadErr = openRequestRows(ctx, db)
		}
	}()
	man, versions, err := func() (*manifest, acceptedVersions, error) {
		if err := storeIdentities(ctx, db, dir, inc); err != nil {
			return nil, nil, err
		}
		versions, err := loadAcceptedVersions(ctx, db)
		if err != nil {
			return nil, nil, err
		}
		// The texts file goes under a hidden name until the manifest
		// that records it is written: a draft refused before that leaves
		// no part of a manifest in the outbox.
		man, err := buildManifest(ctx, db, filepath.Join(outbox, textsDraftName))
		return man, versions, err
	}()
	if man != nil {
		defer func() {
			man.close()
			if man.texts.path != filepath.Join(outbox, textsName) {
				os.Remove(man.texts.path)
			}
		}()
	}
	<-loaded
	defer func() { reqRows.close() }() // opened later on a pool of one connection
	memwatch.Step(ctx, logger, "notify step", "step", "manifest built, tenants read")
	if loadErr != nil {
		return nil, loadErr
	}
	if err != nil {
		return nil, err
	}
	if !early {
		if reqRows, err = openRequestRows(ctx, db); err != nil {
			return nil, err
		}
	}
	defer boundGCHeadroom()()

	// The earlier draft's notices this draft writes again are overwritten
	// in place; the others (tenants no longer in the case) go.
	had := maps.Clone(earlier)
	delete(earlier, regulatorFile)
	for _, t := range tenants {
		delete(earlier, tenantFile(t.ID))
	}
	if err := removeStale(outbox, earlier); err != nil {
		return nil, err
	}

	regLang := filing.Language(inc)
	// Which language each notice is in, before anything is written: custom
	// wording that leaves one out is refused, never filled from another.
	need := map[string]int{}
	for _, t := range tenants {
		need[tenantLanguage(dir, t.ID)]++
	}
	if err := filing.CheckWording(inc, need, "tenant notice(s)"); err != nil {
		return nil, err
	}
	wordings := map[string]filing.Wording{}
	for _, lang := range languages {
		if wordings[lang], err = filing.WordingFor(lang, inc); err != nil {
			return nil, err
		}
	}

	res := &DraftResult{Outbox: outbox}
	deletion := asOf.Add(14 * 24 * time.Hour)
	if inc.Notices.DeletionDeadline != nil {
		deletion = *inc.Notices.DeletionDeadline
	}
	// The attachment's name is a word the tenant reads: in its language.
	attachName := func(c *catalog.Catalog) string {
		return c.MustT("attachment.file_name", "id", safeAttachmentName(inc.ID))
	}

	// Tenant notices are independent: rendered, written and checked on one
	// worker per CPU, each with its own checker (line caches); the manifest
	// is complete (buildManifest) and only read. Results keep the tenants'
	// order, so the outbox and its index are the same as drafted one by one.
	res.Notices = make([]IndexRow, len(tenants))
	failures := make([]string, len(tenants))
	files := newOutboxWriter(outbox, had)
	draftOne := func(wk *draftWorker, i int, t caseTenant, rows []requestRow) error {
		c := wk.c
		row := IndexRow{Kind: "tenant", TenantID: t.ID, NoticeID: inc.ID + "/tenant/" + t.ID,
			File: tenantFile(t.ID), MessageID: "<" + messageID(inc.ID, t.ID, domain) + ">", Language: tenantLanguage(dir, t.ID), Status: StatusReady}
		view := tenantView{
			IncidentID: inc.ID, ProviderName: inc.Provider.Name, Contact: contact, ContactIsDPO: contactIsDPO,
			WindowStart: inc.WindowStart, WindowEnd: inc.WindowEnd,
			DiscoveredAt: inc.DiscoveredAt, ContainedAt: inc.ContainedAt,
			AsOf: asOf, DeletionDeadline: deletion,
			Source: t.Source, Recipient: t.Recipient, SelfOnly: !t.Source && !t.Recipient,
			Attachment: attachName(catalog.Get(tenantLanguage(dir, t.ID))),
		}
		row.Roles = rolesOf(t)
		var to []mail.Address
		if e := dir.Lookup(t.ID); e == nil {
			row.Status, row.Reason = StatusCannotNotify, "not in the tenant directory"
		} else {
			view.Greeting = filing.OneLine(e.Name)
			if e.Problem != "" {
				row.Status, row.Reason = StatusCannotNotify, e.Problem
			}
			for _, a := range e.Emails {
				to = append(to, mail.Address{Name: e.Name, Address: a})
			}
			row.Recipients = strings.Join(e.Emails, ";")
		}
		cat := catalog.Get(row.Language)
		w := wordings[row.Language]
		view.DataCategories, view.Consequences, view.MeasuresTaken, view.MeasuresPlanned = w.DataCategories, w.Consequences, w.MeasuresTaken, w.MeasuresPlanned
		describeRequests(cat, &view, rows, inc.WindowStart)
		csvData := wk.csv.attachmentCSV(cat, rows)
		eml, spec, err := versions.build(row.NoticeID, row.MessageID, emlSpec{From: *from, To: to, ReplyTo: &replyTo, Date: asOf,
			Lang: row.Language, Attachment: &attachment{Name: view.Attachment, ContentType: "text/csv; charset=utf-8", Data: csvData}},
			func(supersedes bool) (rendered, error) {
				view.Supersedes = supersedes
				return renderInto(&wk.render, "tenant", row.Language, view)
			})
		if err != nil {
			return err
		}
		row.MessageID = spec.MessageID
		// Only the set's text outlives the notice: 100,000 sets of maps
		// held to the end were a fifth of the heap each GC cycle scanned.
		own := ownNumbers(view)
		row.ownNumbers = own.String()
		sum := sha256.Sum256(eml)
		row.SHA256 = hex.EncodeToString(sum[:])
		// Checked from memory as written: the same check as 'notify
		// check', without reading the outbox back. Then written: the
		// writer reuses the message's memory once it is in the file.
		failures[i] = strings.Join(c.checkBuilt(eml, &spec, ownerKey(t.ID), own), "; ")
		files.write(row.File, eml)
		res.Notices[i] = row
		return nil
	}
	// A notice's memory is several times its tenant's rows (the rows, the
	// attachment, the message, its check): the notices in flight hold at
	// most draftRowsInFlight rows between them, and a larger tenant's
	// (1.3 million rows at 100M requests) is drafted alone.
	err = parallelEachWeighed(ctx, len(tenants), draftRowsInFlight, func(rows []requestRow) int { return len(rows) }, func(send func(int, []requestRow) bool) error {
		return reqRows.each(tenants, send)
	}, func() *draftWorker { return &draftWorker{c: newChecker(man)} }, func(wk *draftWorker, i int, rows []requestRow) error {
		err := draftOne(wk, i, tenants[i], rows)
		wk.shed()
		return err
	})
	reqRows.close()
	if err := errors.Join(err, files.close(), man.readErr()); err != nil {
		return nil, err
	}
	memwatch.Step(ctx, logger, "notify step", "step", "tenant notices drafted and checked", "notices", len(tenants))
	checked := map[string]string{}
	man.reserve(len(tenants) + 1) // and the regulator's
	for i, t := range tenants {
		row := res.Notices[i]
		man.notices[row.File] = ownerKey(t.ID)
		man.numberText[row.File] = row.ownNumbers
		man.files = append(man.files, row.File)
		if failures[i] != "" {
			checked[row.File] = failures[i]
		}
	}

	// The tenant notices are checked and stored first: the regulator
	// notice states their counts from the notices table, through the same
	// queries as the report's Regulator sheet.
	draftedAt := time.Now().UTC()
	if _, err := checkAndStore(ctx, db, logger, outbox, false, man, res.Notices, nil, checked, draftedAt); err != nil {
		return nil, err
	}
	// The rows as the table now holds them: the final pass appends the
	// regulator notice's row alone unless one of these changed.
	stored := slices.Clone(res.Notices)
	facts, err := filing.Load(ctx, db, inc, asOf)
	if err != nil {
		return nil, err
	}
	reg, err := draftRegulator(inc, facts, regLang, from, domain, contact, contactIsDPO, wordings[regLang], versions)
	if err != nil {
		return nil, err
	}
	reg.Reason = "addressed to the provider's contact point, who files it with the supervisory authority"
	if facts.Late && !slices.Contains(wordings[regLang].Custom, "delay_reasons") {
		logger.Warn("the regulator notice is late and the incident file gives no reasons (notices.delay_reasons): it uses leakmap's default wording",
			"deadline", incident.FormatTime(*facts.Deadline), "as_of", incident.FormatTime(asOf))
	}
	if err := writeNotice(outbox, &reg.IndexRow, reg.eml, !had[reg.File]); err != nil {
		return nil, err
	}
	regOwn, _ := parseNumberSet(reg.ownNumbers)
	if why := strings.Join(newChecker(man).checkBuilt(reg.eml, &reg.spec, regulatorKey, regOwn), "; "); why != "" {
		checked[reg.File] = why
	}
	if err := man.readErr(); err != nil {
		return nil, err
	}
	man.notices[reg.File] = regulatorKey
	man.numbers[reg.File] = regOwn
	man.files = append(man.files, reg.File)
	res.Notices = append(res.Notices, reg.IndexRow)
	if res.Check, err = checkAndStore(ctx, db, logger, outbox, true, man, res.Notices, stored, checked, draftedAt); err != nil {
		return nil, err
	}
	for i := range res.Notices {
		n := res.Notices[i]
		if n.Kind == "regulator" {
			res.Regulator = n
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
	res.Tenant = facts.Notices
	if err := writeIndex(filepath.Join(outbox, IndexName), res.Notices); err != nil {
		return nil, err
	}
	memwatch.Step(ctx, logger, "notify step", "step", "regulator notice, manifest and index written")
	logger.Info("notices drafted", "outbox", outbox, "tenant_notices", res.Tenant.Drafted, "ready", res.Tenant.Ready,
		"blocked", res.Tenant.Blocked, "cannot_notify", res.Tenant.CannotNotify, "regulator", res.Regulator.Status)
	return res, nil
}

// checkAndStore writes the manifest of the notices written so far (when
// writeManifest: the tenant notices' pass leaves it to the final one), takes
// the isolation check of each notice made from memory as it was written
// (checked: file -> reasons, the same check as 'notify check'), checks the
// outbox's listing against the manifest as 'notify check' does, marks a
// failing notice blocked, and rewrites the notices table. stored is the
// rows the table already holds (from an earlier pass, nil: none): when
// notices begins with them unchanged only the rest is appended.
func checkAndStore(ctx context.Context, db *sql.DB, logger *slog.Logger, outbox string, writeManifest bool, man *manifest, notices, stored []IndexRow, checked map[string]string, draftedAt time.Time) (*CheckResult, error) {
	// The manifest is written while the listing is checked: both only
	// read it.
	written := make(chan error, 1)
	if writeManifest {
		if err := man.texts.moveTo(filepath.Join(outbox, textsName)); err != nil {
			return nil, fmt.Errorf("outbox: %w", err)
		}
		go func() { written <- man.write(filepath.Join(outbox, manifestName)) }()
	} else {
		written <- nil
	}
	check, err := checkListing(outbox, man, checked)
	if werr := <-written; werr != nil {
		return nil, fmt.Errorf("outbox: %w", werr)
	}
	if err != nil {
		return nil, err
	}
	failed := map[string]string{}
	for _, f := range check.Failures {
		failed[f.File] = f.Reason
	}
	for i := range notices {
		n := &notices[i]
		if why, bad := failed[n.File]; bad && n.Status != StatusBlocked {
			reason := "isolation check: " + why
			if n.Status == StatusCannotNotify {
				reason += "; also cannot notify: " + n.Reason
			}
			n.Status, n.Reason = StatusBlocked, reason
			logger.Warn("notice blocked by the isolation check", "file", n.File, "reason", why)
		}
	}
	if stored != nil && len(notices) >= len(stored) && slices.Equal(notices[:len(stored)], stored) {
		return check, appendNotices(ctx, db, notices[len(stored):], draftedAt)
	}
	return check, storeNotices(ctx, db, notices, draftedAt)
}

// tenantLanguage is the language of a tenant's notice: the directory's,
// else English.
func tenantLanguage(dir *Directory, id string) string {
	if e := dir.Lookup(id); e != nil && e.Language != "" {
		return e.Language
	}
	return "en"
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

// regulatorMeasures is the measures taken and, last, that every customer
// concerned is notified, written as the items before it are (the
// incident's own wording may start each with a capital and end it with a
// full stop; leakmap's do neither).
func regulatorMeasures(c *catalog.Catalog, taken []string) []string {
	item := c.MustT("regulator.measures.notify_all")
	if n := len(taken); n > 0 {
		last := strings.TrimSpace(taken[n-1])
		if r, _ := utf8.DecodeRuneInString(last); unicode.IsUpper(r) {
			f, fsize := utf8.DecodeRuneInString(item)
			item = string(unicode.ToUpper(f)) + item[fsize:]
		}
		if strings.HasSuffix(last, ".") {
			item += "."
		}
	}
	return append(slices.Clip(taken), item)
}

type regulatorDraft struct {
	IndexRow
	eml  []byte
	spec emlSpec
}

func draftRegulator(inc *incident.Incident, f *filing.Facts, lang string, from *mail.Address, domain, contact string, contactIsDPO bool, w filing.Wording, versions acceptedVersions) (*regulatorDraft, error) {
	v := regulatorView{IncidentID: inc.ID, ProviderName: inc.Provider.Name, ProviderCountry: inc.Provider.Country,
		Contact: contact, ContactIsDPO: contactIsDPO, F: f,
		LaunchedAt: inc.LaunchedAt, DiscoveredAt: inc.DiscoveredAt, AwareAt: inc.AwareAt, ContainedAt: inc.ContainedAt,
		WindowStart: inc.WindowStart, WindowEnd: inc.WindowEnd, AsOf: f.AsOf,
		DataCategories: w.DataCategories, Consequences: w.Consequences, MeasuresTaken: regulatorMeasures(catalog.Get(lang), w.MeasuresTaken),
		MeasuresPlanned: w.MeasuresPlanned, DelayReasons: w.DelayReasons}
	if f.Late {
		v.LateBy = catalog.Get(lang).Duration(f.LateBy)
	}
	row := IndexRow{File: regulatorFile, NoticeID: inc.ID + "/regulator", Kind: "regulator", Roles: "regulator",
		Language: lang, Recipients: contact, Status: StatusReady, MessageID: "<" + messageID(inc.ID, regulatorKey, domain) + ">"}
	replyTo := inc.Provider.Contact()
	eml, spec, err := versions.build(row.NoticeID, row.MessageID, emlSpec{From: *from, To: []mail.Address{replyTo}, ReplyTo: &replyTo,
		Date: f.AsOf, Lang: lang}, func(supersedes bool) (rendered, error) {
		v.Supersedes = supersedes
		return render("regulator", lang, v)
	})
	if err != nil {
		return nil, err
	}
	row.MessageID = spec.MessageID
	row.ownNumbers = ownNumbers(v).String()
	return &regulatorDraft{IndexRow: row, eml: eml, spec: spec}, nil
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

// requestRows reads each tenant's own requests (notify_request_rows), in
// the tenants' order, one tenant at a time: at 100M requests the case
// names about 19 million, 2.4 GB held all at once.
type requestRows struct {
	rows *pieceRows
	// the row read ahead: the first of the next tenant
	tenant string
	row    requestRow
	ahead  bool
	done   bool
	last   string // the tenant of the last row read
	words  map[string]string
}

func openRequestRows(ctx context.Context, db *sql.DB) (*requestRows, error) {
	rows, err := openPieces(ctx, db, "notify_request_rows", 1<<17)
	if err != nil {
		return nil, fmt.Errorf("tenant requests: %w", err)
	}
	return &requestRows{rows: rows, words: map[string]string{}}, nil
}

func (r *requestRows) close() error {
	if r == nil {
		return nil
	}
	return r.rows.Close()
}

// read reads the next row into r.tenant and r.row.
func (r *requestRows) read() error {
	if !r.rows.Next() {
		r.done = true
		return r.rows.Err()
	}
	var tenant string
	var row requestRow
	var own sql.NullBool
	if err := r.rows.Scan(&tenant, &row.Role, &row.RequestID, &row.TS, &row.Tier, &own); err != nil {
		return err
	}
	if tenant < r.last {
		return fmt.Errorf("rows out of tenant order (%q after %q)", tenant, r.last)
	}
	r.last = tenant
	// Roles and tiers are a handful of words: one string each, not one
	// per row (fewer objects for the GC to mark).
	intern := func(s string) string {
		if w, ok := r.words[s]; ok {
			return w
		}
		r.words[s] = s
		return s
	}
	row.Own, row.Role, row.Tier = own.Bool, intern(row.Role), intern(row.Tier)
	r.tenant, r.row, r.ahead = tenant, row, true
	return nil
}

// each sends each tenant's rows in turn (tenants sorted by id, as the
// rows are); rows of a tenant not in the list are skipped.
func (r *requestRows) each(tenants []caseTenant, send func(int, []requestRow) bool) error {
	for i, t := range tenants {
		if i > 0 && t.ID <= tenants[i-1].ID {
			return fmt.Errorf("tenant requests: tenants out of order (%q after %q)", t.ID, tenants[i-1].ID)
		}
		var mine []requestRow
		for {
			if !r.ahead && !r.done {
				if err := r.read(); err != nil {
					return fmt.Errorf("tenant requests: %w", err)
				}
			}
			if r.done || r.tenant > t.ID {
				break
			}
			if r.tenant == t.ID {
				mine = append(mine, r.row)
			}
			r.ahead = false
		}
		if !send(i, mine) {
			return nil
		}
	}
	return nil
}

// attachmentCSV lists the tenant's own requests: ids, times (RFC 3339),
// role, the strongest cross-tenant tier, and whether its own earlier
// requests matched too; headers and values in the notice's language.
func attachmentCSV(c *catalog.Catalog, rows []requestRow) []byte {
	return new(csvScratch).attachmentCSV(c, rows)
}

// csvScratch is one worker's memory for the attachments, reused from notice
// to notice (the message copies the bytes).
type csvScratch struct {
	b bytes.Buffer
	w *sheetcsv.Writer
}

// attachmentCSV is attachmentCSV into s's memory: the bytes hold until the
// next call.
func (s *csvScratch) attachmentCSV(c *catalog.Catalog, rows []requestRow) []byte {
	s.b.Reset()
	if s.w == nil {
		s.w = sheetcsv.NewWriter(&s.b)
	}
	b, w := &s.b, s.w
	w.Write(attachmentHeader(c))
	for _, r := range rows {
		own := ""
		if r.Role == "affected" {
			own = c.MustT("common.no")
			if r.Own {
				own = c.MustT("common.yes")
			}
		}
		w.Write([]string{r.RequestID, r.TS, c.MustT("role." + r.Role), c.MustT("tier." + r.Tier), own})
	}
	w.Flush()
	return b.Bytes()
}

// draftRowsInFlight bounds the requests of the notices drafted at once
// (Draft): about 100 MB of rows, as much again of attachments.
const draftRowsInFlight = 1 << 20

// draftWorker is one worker's memory, reused from notice to notice: its
// checker (and line caches) and its scratch.
type draftWorker struct {
	c      *checker
	csv    csvScratch
	render renderScratch
}

// scratchKeep is the largest scratch buffer a worker keeps for the next
// notice: a large tenant's (hundreds of MB at 100M requests) goes.
const scratchKeep = 4 << 20

// shed lets go of the scratch a large notice left.
func (wk *draftWorker) shed() {
	if wk.csv.b.Cap() > scratchKeep {
		wk.csv = csvScratch{}
	}
	wk.c.built.shed()
	wk.c.shedOwn()
	wk.render.shed()
}

// regulatorFile is the regulator notice's file in the outbox.
const regulatorFile = "regulator.eml"

// prepareOutbox creates the outbox, removes an earlier draft's index and
// manifest (until they are written again, the outbox can be neither sent
// nor checked, so an interrupted draft leaves nothing to send), and returns
// the earlier draft's notice files, which it leaves for the draft to
// overwrite: on ext4, deleting 100,000 files and creating as many again
// took 13.8 s and 18.5 s (the new inodes are checked against those just
// freed), overwriting them 5.5 s. An entry named *.eml that is not a
// regular file or a folder (a link) goes now: the draft writes only into
// files of its own.
func prepareOutbox(outbox string) (map[string]bool, error) {
	if err := os.MkdirAll(outbox, 0o755); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	entries, err := readDirUnsorted(outbox)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	earlier := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(n, ".eml") && e.Type().IsRegular():
			earlier[n] = true
		case strings.HasSuffix(n, ".eml") || n == IndexName || n == manifestName || n == textsName ||
			strings.HasPrefix(n, ".isolation-texts-") || strings.HasPrefix(n, ".isolation-ids-"): // a draft's spilled files, left by a crash
			if err := os.Remove(filepath.Join(outbox, n)); err != nil {
				return nil, fmt.Errorf("outbox: %w", err)
			}
		}
	}
	return earlier, nil
}

// removeStale removes the earlier draft's notice files this draft does not
// write again (stale).
func removeStale(outbox string, stale map[string]bool) error {
	for n := range stale {
		if err := os.Remove(filepath.Join(outbox, n)); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
	}
	return nil
}

// outboxWriter writes the tenant notices on one goroutine of its own, in
// the order given: the workers that render and check them do not wait for
// the disk, and files are created one at a time (creating files in one
// directory from several threads costs the kernel several times the CPU).
type outboxWriter struct {
	dir  string
	had  map[string]bool // the notice files the outbox held when the draft began
	ch   chan outboxFile
	done chan struct{}
	err  error
	// queued weighs the bytes waiting for the disk, at most
	// outboxQueueBytes (one larger message alone): a notice of a large
	// tenant is 150 MB at 100M requests, and 256 of them queued were
	// gigabytes.
	queued *weightGate
}

const outboxQueueBytes = 64 << 20

type outboxFile struct {
	name   string
	data   []byte
	weight int // taken from queued
}

func newOutboxWriter(dir string, had map[string]bool) *outboxWriter {
	w := &outboxWriter{dir: dir, had: had, ch: make(chan outboxFile, 256), done: make(chan struct{}), queued: newWeightGate(outboxQueueBytes)}
	go func() {
		defer close(w.done)
		for f := range w.ch {
			if w.err == nil {
				if err := writeOver(filepath.Join(w.dir, f.name), f.data, !w.had[f.name]); err != nil {
					w.err = fmt.Errorf("outbox: %w", err)
				}
			}
			w.queued.release(f.weight)
			reuseEMLBuffer(f.data)
		}
	}()
	return w
}

// write queues one message; nothing may use data afterwards (its memory is
// reused for the next messages, emlBuffers). It waits while the queue
// holds outboxQueueBytes.
func (w *outboxWriter) write(name string, data []byte) {
	w.ch <- outboxFile{name, data, w.queued.acquire(len(data))}
}

// close waits for every queued file and returns the first error.
func (w *outboxWriter) close() error {
	close(w.ch)
	<-w.done
	return w.err
}

func writeNotice(outbox string, row *IndexRow, eml []byte, fresh bool) error {
	sum := sha256.Sum256(eml)
	row.SHA256 = hex.EncodeToString(sum[:])
	if err := writeOver(filepath.Join(outbox, row.File), eml, fresh); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

var indexHeader = []string{"file", "notice_id", "kind", "tenant_id", "roles", "language", "recipients", "status", "reason", "message_id", "sha256"}

func writeIndex(path string, rows []IndexRow) error {
	// Written through a buffer, not built whole first: at 100,000 notices
	// the index is 23 MB, and a buffer grown to hold it was 46 MB of
	// fresh memory.
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := sheetcsv.NewWriter(bw)
	w.Write(indexHeader)
	rec := make([]string, len(indexHeader))
	for _, r := range rows {
		rec = append(rec[:0], r.File, r.NoticeID, r.Kind, r.TenantID, r.Roles, r.Language, r.Recipients, r.Status, r.Reason, r.MessageID, r.SHA256)
		w.Write(rec)
	}
	w.Flush()
	err = errors.Join(w.Error(), bw.Flush(), f.Close())
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// storeNotices rewrites the notices table; the appender keeps 100,000
// notices to a fraction of a second.
func storeNotices(ctx context.Context, db *sql.DB, rows []IndexRow, now time.Time) error {
	return writeNotices(ctx, db, rows, now, true)
}

// appendNotices adds rows to the notices table.
func appendNotices(ctx context.Context, db *sql.DB, rows []IndexRow, now time.Time) error {
	return writeNotices(ctx, db, rows, now, false)
}

func writeNotices(ctx context.Context, db *sql.DB, rows []IndexRow, now time.Time, clear bool) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("notices table: %w", err)
	}
	defer conn.Close()
	if clear {
		if _, err := conn.ExecContext(ctx, queries.Get("notify_clear_notices")); err != nil {
			return fmt.Errorf("notices table: %w", err)
		}
	}
	err = conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppenderWithColumns(dc.(driver.Conn), "", "", "notices",
			[]string{"notice_id", "kind", "tenant_id", "roles", "language", "recipients", "message_id", "file", "status", "reason", "drafted_at", "sha256", "own_numbers"})
		if err != nil {
			return err
		}
		for _, r := range rows {
			var tenant driver.Value
			if r.TenantID != "" {
				tenant = r.TenantID
			}
			if err := app.AppendRow(r.NoticeID, r.Kind, tenant, r.Roles, r.Language, r.Recipients, r.MessageID, r.File, r.Status, r.Reason, now, r.SHA256, r.ownNumbers); err != nil {
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
