package notify

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"github.com/leakmap/leakmap/ingest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/leakmap/leakmap/simulate"
)

// TestSimulatedIncidents runs simulate → (clean load) → analysis → draft →
// check over several simulated incidents: every draft passes the isolation
// check, the directory gaps are listed as "cannot notify", and an
// independent scan of each notice (raw bytes and decoded parts) finds no
// other tenant's id, name, email or request id, and no 6-word run of any
// logged text.
func TestSimulatedIncidents(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated incidents")
	}
	for _, seed := range []int64{1, 2, 3, 4} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := simulate.DefaultConfig()
			cfg.Seed, cfg.Noise, cfg.CSVPart, cfg.Requests, cfg.Tenants = seed, false, false, 2000, 30+int(seed)*5
			cfg.Allocator = []string{"sorted", "fifo", "lifo", "sorted"}[seed-1]
			start := time.Now()
			sum, err := simulate.Generate(ctx, nil, dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			db := openDB(t)
			loadSimulated(t, db, dir)
			inc, err := incident.Load(sum.Incident)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := analysis.Run(ctx, db, nil, inc); err != nil {
				t.Fatal(err)
			}
			tenantDir, err := LoadDirectory(sum.Tenants)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Draft(ctx, db, nil, inc, tenantDir, filepath.Join(t.TempDir(), "outbox"), *inc.AsOf)
			if err != nil {
				t.Fatal(err)
			}
			if res.Blocked != 0 || len(res.Check.Failures) != 0 {
				t.Fatalf("blocked: %+v", res.Check.Failures)
			}
			if res.Drafted != countTenants(t, db)+1 || res.Drafted < 3 {
				t.Fatalf("%d notices for %d tenants", res.Drafted, countTenants(t, db))
			}
			byTenant := map[string]IndexRow{}
			for _, n := range res.Notices {
				byTenant[n.TenantID] = n
			}
			for _, gap := range []string{sum.MissingTenant, sum.NoEmailTenant} {
				if n, ok := byTenant[gap]; gap != "" && (!ok || n.Status != StatusCannotNotify || n.Reason == "") {
					t.Errorf("directory gap %s: %+v", gap, n)
				}
			}
			t0 := time.Now()
			scanNotices(t, db, tenantDir, res)
			checkOneLanguage(t, tenantDir, res)
			checkStatedTiers(t, db, res)
			checkListedCount(t, res)
			t.Logf("%d notices; simulate+analysis+draft %v, scan %v", res.Drafted, t0.Sub(start), time.Since(t0))
		})
	}
}

// loadSimulated ingests a simulated case's logs with the real ingest step.
func loadSimulated(t testing.TB, db *sql.DB, dir string) {
	t.Helper()
	if _, err := ingest.Run(context.Background(), db, nil, []string{filepath.Join(dir, "logs")}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
}

// scanNotices is the independent scan: plain substring search with word
// boundaries over raw bytes and decoded parts, and whitespace-split 6-word
// runs for logged texts.
func scanNotices(t *testing.T, db *sql.DB, dir *Directory, res *DraftResult) {
	t.Helper()
	ids := map[string][]string{}
	add := func(tenant, v string) {
		if v != "" {
			ids[tenant] = append(ids[tenant], v)
		}
	}
	rows, err := db.Query(`SELECT tenant_id, request_id FROM affected_requests
		UNION SELECT source_tenant_id, source_request_id FROM exposures
		UNION SELECT recipient_tenant_id, trigger_request_id FROM exposures
		UNION SELECT tenant_id, tenant_id FROM tenants`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tenant, v string
		rows.Scan(&tenant, &v)
		add(tenant, v)
	}
	rows.Close()
	for _, id := range dir.IDs() {
		e := dir.Lookup(id)
		add(id, id)
		add(id, e.Name)
		for _, a := range e.Emails {
			add(id, a)
		}
	}
	runs := map[string]bool{}
	trows, err := db.Query(`SELECT prompt_text FROM requests WHERE prompt_text IS NOT NULL
		UNION SELECT response_text FROM requests WHERE response_text IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for trows.Next() {
		var s string
		trows.Scan(&s)
		w := strings.Fields(strings.ToLower(s))
		for i := 0; i+6 <= len(w); i++ {
			runs[strings.Join(w[i:i+6], " ")] = true
		}
	}
	trows.Close()
	for _, n := range res.Notices {
		raw := readOutbox(t, res.Outbox, n.File)
		p := decodeForTest(t, raw)
		hay := strings.ToLower(raw + "\n" + p.subject + "\n" + p.text + "\n" + p.html + "\n" + p.attachment)
		// The owner's own identifiers are blanked first: another tenant's
		// name inside the owner's own ("Riviera SAS" in "Riviera SAS 27")
		// reveals nothing.
		own := append([]string(nil), ids[n.TenantID]...)
		sort.Slice(own, func(i, j int) bool { return len(own[i]) > len(own[j]) })
		for _, v := range own {
			hay = strings.ReplaceAll(hay, strings.ToLower(v), " ")
		}
		for owner, vs := range ids {
			if owner == n.TenantID {
				continue
			}
			for _, v := range vs {
				if containsWord(hay, strings.ToLower(v)) {
					t.Errorf("%s holds %q of tenant %s", n.File, v, owner)
				}
			}
		}
		w := strings.Fields(strings.ToLower(p.text + " " + p.html + " " + p.attachment))
		for i := 0; i+6 <= len(w); i++ {
			if runs[strings.Join(w[i:i+6], " ")] {
				t.Errorf("%s holds logged text", n.File)
				break
			}
		}
	}
}

// containsWord reports whether v occurs in s with no letter or digit right
// before or after it.
func containsWord(s, v string) bool {
	isWord := func(r rune) bool { return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) }
	for from := 0; ; {
		i := strings.Index(s[from:], v)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(v):])
		if !isWord(before) && !isWord(after) {
			return true
		}
		from = i + 1
	}
}

// Words that only one of the languages uses, often: a notice holding one
// of the other language's is not wholly in its own.
var stopWords = map[string][]string{
	"en": {"the", "of", "and", "to", "your", "our", "we", "you", "with", "which", "were", "was", "have", "has", "this", "that", "from", "by", "may", "been", "is", "are", "not", "it", "for", "at",
		"requests", "customer", "customers", "evidence", "responses"}, // the last: content words, e.g. in a file name
	"fr": {"le", "la", "les", "des", "du", "une", "vous", "nous", "avec", "dans", "est", "pour", "sur", "pas", "qui", "que", "aux", "été", "votre", "vos", "leur", "ont", "sont", "ces", "cette",
		"requêtes", "données", "réponses", "clients"},
}

// checkOneLanguage: the decoded text part of every notice holds no stop
// word of the other language, once the owner's own name and addresses are
// blanked (a name is not a sentence).
func checkOneLanguage(t *testing.T, dir *Directory, res *DraftResult) {
	t.Helper()
	for _, n := range res.Notices {
		p := decodeForTest(t, readOutbox(t, res.Outbox, n.File))
		text := strings.ToLower(p.subject + "\n" + p.text)
		if e := dir.Lookup(n.TenantID); e != nil {
			for _, v := range append([]string{e.Name}, e.Emails...) {
				text = strings.ReplaceAll(text, strings.ToLower(v), " ")
			}
		}
		words := map[string]bool{}
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
			words[w] = true
		}
		other := map[string]string{"en": "fr", "fr": "en"}[n.Language]
		for _, w := range stopWords[other] {
			if words[w] {
				t.Errorf("%s (%s) holds the %s word %q", n.File, n.Language, other, w)
			}
		}
		hits := 0
		for _, w := range stopWords[n.Language] {
			if words[w] {
				hits++
			}
		}
		if hits < 5 {
			t.Errorf("%s (%s) holds only %d of its own language's common words", n.File, n.Language, hits)
		}
	}
}

// checkStatedTiers: per role, the strength a notice states is the strongest
// cross-tenant tier of that tenant and role in the exposures, with the
// requests counted per tier, computed here from the exposures on their own.
func checkStatedTiers(t *testing.T, db *sql.DB, res *DraftResult) {
	t.Helper()
	type key struct{ tenant, role string }
	perTier := map[key]map[string]int{}
	own := map[string]bool{}
	bump := func(k key, tier string) {
		if perTier[k] == nil {
			perTier[k] = map[string]int{}
		}
		perTier[k][tier]++
	}
	rows, err := db.Query(`SELECT source_tenant_id, min(tier_rank) FROM exposures WHERE NOT self_exposure GROUP BY source_tenant_id, source_request_id`)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"", "confirmed", "probable", "possible"}
	for rows.Next() {
		var tenant string
		var rank int
		rows.Scan(&tenant, &rank)
		bump(key{tenant, "exposed"}, names[rank])
	}
	rows.Close()
	rows, err = db.Query(`SELECT a.tenant_id, a.request_id, any_value(a.unknown_slots IS NULL OR a.unknown_slots > 0),
		min(e.tier_rank) FILTER (WHERE NOT e.self_exposure), coalesce(bool_or(e.self_exposure), false)
		FROM affected_requests a LEFT JOIN exposures e ON e.trigger_row_id = a.row_id GROUP BY a.tenant_id, a.request_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tenant, id string
		var unknown, self bool
		var rank sql.NullInt64
		rows.Scan(&tenant, &id, &unknown, &rank, &self)
		tier := "none"
		switch {
		case rank.Valid:
			tier = names[rank.Int64]
		case unknown:
			tier = "unknown"
		}
		bump(key{tenant, "affected"}, tier)
		own[tenant] = own[tenant] || self
	}
	rows.Close()
	for _, n := range res.Notices {
		if n.Kind != "tenant" {
			continue
		}
		c := catalog.Get(n.Language)
		p := decodeForTest(t, readOutbox(t, res.Outbox, n.File))
		for _, role := range []string{"exposed", "affected"} {
			counts := perTier[key{n.TenantID, role}]
			strongest, total, parts := "", 0, []string{}
			for _, tier := range []string{"confirmed", "probable", "possible", "unknown", "none"} {
				if counts[tier] == 0 {
					continue
				}
				if strongest == "" && tier != "unknown" && tier != "none" {
					strongest = tier
				}
				total += counts[tier]
				parts = append(parts, c.MustT("tier_count."+tier, "n", counts[tier]))
			}
			if total == 0 || (role == "affected" && n.Roles != "recipient" && n.Roles != "both") {
				continue
			}
			side := map[string]string{"exposed": "source", "affected": "recipient"}[role]
			requests, breakdown := c.MustT("tenant.requests", "n", total), strings.Join(parts, c.MustT("common.list_sep"))
			want := c.MustT("tenant.recipient.strength_unknown", "requests", requests, "breakdown", breakdown)
			switch {
			case strongest != "" && len(parts) == 1: // every request has the strongest tier
				want = c.MustT("tenant.strength_all", "n", total, "tier", c.MustT("tier."+strongest))
			case strongest != "":
				want = c.MustT("tenant."+side+".strength", "tier", c.MustT("tier."+strongest), "requests", requests, "breakdown", breakdown)
			}
			if !strings.Contains(p.text, want) {
				t.Errorf("%s (%s): text lacks %q", n.File, role, want)
			}
			if ownLine := c.MustT("tenant.recipient.own"); role == "affected" && own[n.TenantID] != strings.Contains(p.text, ownLine) {
				t.Errorf("%s: says some matches are its own: %v, want %v", n.File, !own[n.TenantID], own[n.TenantID])
			}
			if role == "exposed" && strongest != "confirmed" && strings.Contains(p.attachment, ","+c.MustT("role.exposed")+","+c.MustT("tier.confirmed")) {
				t.Errorf("%s: attachment shows a confirmed exposed request, the exposures have none", n.File)
			}
		}
	}
}

// checkListedCount holds each tenant notice's count of the attached
// requests to the attachment itself: the distinct request ids, not its
// rows (a request both affected and exposed has a row for each role), with
// the span of their times, and the sentence on the requests with two rows
// exactly when there are some.
func checkListedCount(t *testing.T, res *DraftResult) {
	t.Helper()
	sawTwice := false
	for _, n := range res.Notices {
		if n.Kind != "tenant" {
			continue
		}
		c := catalog.Get(n.Language)
		p := decodeForTest(t, readOutbox(t, res.Outbox, n.File))
		recs, err := csv.NewReader(strings.NewReader(p.attachment)).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("%s: attachment: %v (%d lines)", n.File, err, len(recs))
		}
		ids := map[string]bool{}
		var first, last time.Time
		for i, r := range recs[1:] {
			ids[r[0]] = true
			ts, err := time.Parse(time.RFC3339, r[1])
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 || ts.Before(first) {
				first = ts
			}
			if i == 0 || ts.After(last) {
				last = ts
			}
		}
		key := "tenant.file.intro"
		if n.Roles == "self" {
			key = "tenant.file.intro_self"
		}
		if want := c.MustT(key, "file", p.attachmentName, "n", len(ids), "first", first, "last", last); !strings.Contains(p.text, want) {
			t.Errorf("%s: text lacks %q", n.File, want)
		}
		twice := len(recs) - 1 - len(ids)
		sentence := c.MustT("tenant.file.twice", "n", max(twice, 1), "affected", c.MustT("role.affected"), "exposed", c.MustT("role.exposed"))
		if strings.Contains(p.text, sentence) != (twice > 0) {
			t.Errorf("%s: %d requests on two rows; text says %q: %v", n.File, twice, sentence, !(twice > 0))
		}
		sawTwice = sawTwice || twice > 0
	}
	if !sawTwice {
		t.Error("no notice lists a request with a row for each role: the count of such requests went untested")
	}
}
