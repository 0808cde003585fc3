package notify

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// genCase is a random case: tenants, requests, exposures, a directory.
type genCase struct {
	tenants   []genTenant
	requests  []genRequest
	directory string
}

type genTenant struct {
	id, name, email string
}

type genRequest struct {
	row              int
	id, tenant       string
	ts               time.Time
	prompt, response string
	trigger          bool
	sources          []int // row numbers (1-based) of its sources
	tiers            []int
	unknownSlots     int
}

const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

func randWord(r *rand.Rand, n int, letters string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// genRandomCase draws a case; identifiers have fixed shapes so a plain
// substring scan can tell one tenant's from another's.
func genRandomCase(r *rand.Rand, nTenants, reqPerTenant int) *genCase {
	c := &genCase{}
	seen := map[string]bool{}
	for len(c.tenants) < nTenants {
		w := randWord(r, 8, "abcdefghijklmnopqrstuvwxyz")
		if seen[w] {
			continue
		}
		seen[w] = true
		id := "cust-" + randWord(r, 6, alnum)
		c.tenants = append(c.tenants, genTenant{id: id, name: strings.ToUpper(w[:1]) + w[1:] + " Labs", email: "team@" + w + ".example"})
	}
	base := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	vocab := []string{"the", "invoice", "patient", "summary", "of", "contract", "please", "draft", "reply", "secret", "for", "our", "client"}
	text := func() string {
		n := 1 + r.IntN(12)
		ws := make([]string, n)
		for i := range ws {
			if r.IntN(3) == 0 {
				ws[i] = vocab[r.IntN(len(vocab))]
			} else {
				ws[i] = randWord(r, 3+r.IntN(6), "abcdefghijklmnopqrstuvwxyz")
			}
		}
		return strings.Join(ws, " ")
	}
	n := nTenants * reqPerTenant
	for i := 0; i < n; i++ {
		t := c.tenants[r.IntN(nTenants)]
		req := genRequest{row: i + 1, id: "req-" + randWord(r, 10, alnum), tenant: t.id,
			ts: base.Add(time.Duration(i) * time.Second)}
		if r.IntN(2) == 0 {
			req.prompt = text()
		}
		if r.IntN(2) == 0 {
			req.response = text()
		}
		if i > 3 && r.IntN(4) == 0 {
			req.trigger = true
			req.unknownSlots = r.IntN(3) - 1 // -1: NULL
			for k := r.IntN(4); k > 0; k-- {
				src := r.IntN(i) // an earlier row, index
				req.sources = append(req.sources, src+1)
				req.tiers = append(req.tiers, 1+r.IntN(3))
			}
		}
		c.requests = append(c.requests, req)
	}
	var d strings.Builder
	d.WriteString("tenant_id,name,email,language,jurisdiction\n")
	for i, t := range c.tenants {
		switch {
		case i%7 == 3: // missing from the directory
			continue
		case i%11 == 5:
			fmt.Fprintf(&d, "%s,%s,,en,FR\n", t.id, t.name) // no address: cannot notify
		default:
			fmt.Fprintf(&d, "%s,%s,%s,%s,FR\n", t.id, t.name, t.email, []string{"en", "fr"}[r.IntN(2)])
		}
	}
	c.directory = d.String()
	return c
}

func sqlStr(s string) string {
	if s == "" {
		return "NULL"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// load inserts the case, deriving the tenants table from the exposures as
// the analysis does.
func (c *genCase) load(t testing.TB, db *sql.DB) {
	t.Helper()
	exec := func(q string) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%v\n%.300s", err, q)
		}
	}
	var b strings.Builder
	ts := func(x time.Time) string { return "TIMESTAMPTZ '" + x.Format(time.RFC3339) + "'" }
	flush := func(prefix string, rows []string) {
		for len(rows) > 0 {
			k := min(len(rows), 500)
			exec(prefix + strings.Join(rows[:k], ",\n"))
			rows = rows[k:]
		}
	}
	var reqRows, affRows, expRows []string
	for _, q := range c.requests {
		reqRows = append(reqRows, fmt.Sprintf("(%d,%s,%s,%s,%s,'m',900000,10,200,'p1','d1',%s,%s,%d,1,%d)",
			q.row, sqlStr(q.id), ts(q.ts), ts(q.ts.Add(time.Second)), sqlStr(q.tenant), sqlStr(q.prompt), sqlStr(q.response), q.row, q.row))
		if !q.trigger {
			continue
		}
		unknown := "NULL"
		if q.unknownSlots >= 0 {
			unknown = fmt.Sprint(q.unknownSlots)
		}
		affRows = append(affRows, fmt.Sprintf("(%s,%d,%s,%s,NULL,'m',900000,10,681280,'p1','d1',%s)", sqlStr(q.id), q.row, sqlStr(q.tenant), ts(q.ts), unknown))
		done := map[int]bool{}
		for i, s := range q.sources {
			if done[s] {
				continue
			}
			done[s] = true
			src := c.requests[s-1]
			tier := []string{"", "confirmed", "probable", "possible"}[q.tiers[i]]
			expRows = append(expRows, fmt.Sprintf("(%s,%s,%d,%d,%s,%s,%s,%s,'%s',%d,%v,'k=v')",
				sqlStr(src.id), sqlStr(q.id), src.row, q.row, sqlStr(src.tenant), sqlStr(q.tenant), ts(src.ts), ts(q.ts), tier, q.tiers[i], src.tenant == q.tenant))
		}
	}
	_ = b
	flush("INSERT INTO requests VALUES ", reqRows)
	flush("INSERT INTO affected_requests VALUES ", affRows)
	flush("INSERT INTO exposures VALUES ", expRows)
	exec(`INSERT INTO tenants
	WITH r AS (SELECT tenant_id, count(DISTINCT request_id) AS n, min(ts) AS f, max(ts) AS l FROM affected_requests GROUP BY ALL),
	     s AS (SELECT source_tenant_id AS tenant_id, count(DISTINCT source_request_id) AS n, min(source_ts) AS f, max(source_ts) AS l
	           FROM exposures WHERE NOT self_exposure GROUP BY ALL)
	SELECT tenant_id,
	       CASE WHEN r.n IS NOT NULL AND s.n IS NOT NULL THEN 'both' WHEN r.n IS NOT NULL THEN 'recipient' ELSE 'source' END,
	       '', coalesce(r.n, 0), coalesce(s.n, 0), least(r.f, s.f), greatest(r.l, s.l)
	FROM r FULL JOIN s USING (tenant_id)`)
}

// TestIsolationProperty drafts many random cases: every draft passes the
// isolation check, and an independent scan of each notice (raw bytes and
// decoded parts) finds no other tenant's id, name, email or request id, and
// no 6-word run of any logged text.
func TestIsolationProperty(t *testing.T) {
	cases := 40
	if testing.Short() {
		cases = 8
	}
	for seed := 1; seed <= cases; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 42))
			c := genRandomCase(r, 3+r.IntN(25), 1+r.IntN(6))
			db := openDB(t)
			c.load(t, db)
			dir, err := ParseDirectory([]byte(c.directory), "tenants.csv")
			if err != nil {
				t.Fatal(err)
			}
			res, err := Draft(context.Background(), db, nil, testIncident(t, ""), dir, filepath.Join(t.TempDir(), "o"), testAsOf)
			if err != nil {
				t.Fatal(err)
			}
			if res.Blocked != 0 || len(res.Check.Failures) != 0 {
				t.Fatalf("isolation check fails on a correct draft: %+v", res.Check.Failures)
			}
			ids := map[string][]string{} // tenant -> identifiers
			for _, tn := range c.tenants {
				ids[tn.id] = append(ids[tn.id], tn.id, tn.name, tn.email)
			}
			var texts [][]string
			for _, q := range c.requests {
				ids[q.tenant] = append(ids[q.tenant], q.id)
				for _, s := range []string{q.prompt, q.response} {
					if w := strings.Fields(s); len(w) >= shingleWords {
						texts = append(texts, w)
					}
				}
			}
			owners := make([]string, 0, len(ids))
			for o := range ids {
				owners = append(owners, o)
			}
			sort.Strings(owners)
			for _, n := range res.Notices {
				raw, err := os.ReadFile(filepath.Join(res.Outbox, n.File))
				if err != nil {
					t.Fatal(err)
				}
				p := decodeForTest(t, string(raw))
				hay := strings.ToLower(string(raw) + "\n" + p.subject + "\n" + p.text + "\n" + p.html + "\n" + p.attachment)
				for _, o := range owners {
					if o == n.TenantID {
						continue
					}
					for _, id := range ids[o] {
						if strings.Contains(hay, strings.ToLower(id)) {
							t.Errorf("%s (%s) holds %q of tenant %s", n.File, n.Roles, id, o)
						}
					}
				}
				decoded := strings.Join(strings.Fields(strings.ToLower(p.text+" "+p.html+" "+p.attachment)), " ")
				for _, w := range texts {
					for i := 0; i+shingleWords <= len(w); i++ {
						if run := strings.Join(w[i:i+shingleWords], " "); strings.Contains(decoded, run) {
							t.Errorf("%s holds logged text", n.File)
						}
					}
				}
			}
			// Every tenant of the case got a notice, and the counts add up.
			if len(res.Notices) != countTenants(t, db)+1 || res.Ready+res.Blocked+res.CannotNotify != res.Drafted {
				t.Errorf("%d notices for %d tenants; %+v", len(res.Notices), countTenants(t, db), res)
			}
		})
	}
}

func countTenants(t testing.TB, db *sql.DB) int {
	var n int
	if err := db.QueryRow(`SELECT count(DISTINCT tenant_id) FROM tenants`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
