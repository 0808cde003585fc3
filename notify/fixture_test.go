package notify

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
)

const testIncidentYAML = `id: WAI-2026-0908
title: Cross-tenant data in glm-5.3 responses
models: [glm-5.3]
window: {start: 2026-08-27T00:00:00Z, end: 2026-09-09T14:00:00Z}
launched_at: 2026-08-27T00:00:00Z
discovered_at: 2026-09-08T23:11:00Z
aware_at: 2026-09-09T10:00:00Z
contained_at: 2026-09-09T14:00:00Z
as_of: 2026-09-10T09:00:00Z
capacity: {max_context_tokens: 1048576, prefill_pool_tokens: 681280, decode_pool_tokens: 3200000}
provider: {name: Example Inference SAS, email: notices@inference.example, dpo_email: dpo@inference.example, country: FR}
`

func testIncident(t testing.TB, extra string) *incident.Incident {
	t.Helper()
	inc, err := incident.Parse([]byte(testIncidentYAML+extra), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return inc
}

// fixtureSQL is a small case: who may have leaked to whom, with logged texts.
//
//	t-alpha  source (confirmed, to gamma)                       en
//	t-beta   source (probable to gamma, confirmed to delta)     fr
//	t-gamma  recipient (from alpha, beta and delta)             en
//	t-delta  both: r-d1 reached gamma, its trigger r-d9 read beta's r-b1
//	t-eps    self only: its trigger read its own earlier request  fr
//	t-zeta   recipient (from eta), not in the directory
//	t-eta    source, no email in the directory
//	t-unused in the directory only
const fixtureSQL = `
INSERT INTO requests VALUES
 (1,'r-a1','2026-09-01T10:00:00Z','2026-09-01T10:00:05Z','t-alpha','glm-5.3',4000,100,200,'p1','d1','alpha confidential merger plan with globex numbers attached','ok',1,1,1),
 (2,'r-b1','2026-09-01T10:00:02Z','2026-09-01T10:00:04Z','t-beta','glm-5.3',3000,50,200,'p1','d1','beta patient record for jean dupont born in lyon','ok',2,1,2),
 (3,'r-g1','2026-09-01T10:00:06Z','2026-09-01T10:00:09Z','t-gamma','glm-5.3',900000,20,200,'p1','d1','x','alpha confidential merger plan with globex numbers',3,1,3),
 (4,'r-d1','2026-09-01T11:00:00Z','2026-09-01T11:00:02Z','t-delta','glm-5.3',2000,10,200,'p1','d2','delta private roadmap for the next quarter release','ok',4,1,4),
 (5,'r-d9','2026-09-01T11:00:05Z','2026-09-01T11:00:08Z','t-delta','glm-5.3',900000,10,200,'p1','d1',NULL,'beta patient record for jean',5,1,5),
 (6,'r-g2','2026-09-01T11:00:06Z','2026-09-01T11:00:09Z','t-gamma','glm-5.3',900000,20,200,'p1','d2',NULL,NULL,6,1,6),
 (7,'r-e1','2026-09-02T08:00:00Z','2026-09-02T08:00:02Z','t-eps','glm-5.3',1000,10,200,'p1','d3','epsilon own words only here today','ok',7,1,7),
 (8,'r-e2','2026-09-02T08:00:05Z','2026-09-02T08:00:09Z','t-eps','glm-5.3',900000,10,200,'p1','d3',NULL,NULL,8,1,8),
 (9,'r-z1','2026-09-02T09:00:00Z','2026-09-02T09:00:09Z','t-zeta','glm-5.3',900000,10,200,'p1','d1',NULL,NULL,9,1,9),
 (10,'r-h1','2026-09-02T08:59:00Z','2026-09-02T08:59:09Z','t-eta','glm-5.3',1000,10,200,'p1','d1',NULL,NULL,10,1,10);
INSERT INTO affected_requests VALUES
 ('r-g1',3,'t-gamma','2026-09-01T10:00:06Z','2026-09-01T10:00:09Z','glm-5.3',900000,20,681280,'p1','d1',0),
 ('r-d9',5,'t-delta','2026-09-01T11:00:05Z','2026-09-01T11:00:08Z','glm-5.3',900000,10,681280,'p1','d1',0),
 ('r-g2',6,'t-gamma','2026-09-01T11:00:06Z','2026-09-01T11:00:09Z','glm-5.3',900000,20,681280,'p1','d2',0),
 ('r-e2',8,'t-eps','2026-09-02T08:00:05Z','2026-09-02T08:00:09Z','glm-5.3',900000,10,681280,'p1','d3',0),
 ('r-z1',9,'t-zeta','2026-09-02T09:00:00Z','2026-09-02T09:00:09Z','glm-5.3',900000,10,681280,'p1','d1',0);
INSERT INTO exposures VALUES
 ('r-a1','r-g1',1,3,'t-alpha','t-gamma','2026-09-01T10:00:00Z','2026-09-01T10:00:06Z','confirmed',1,false,'shingles=3'),
 ('r-b1','r-g1',2,3,'t-beta','t-gamma','2026-09-01T10:00:02Z','2026-09-01T10:00:06Z','probable',2,false,'slots=1200'),
 ('r-b1','r-d9',2,5,'t-beta','t-delta','2026-09-01T10:00:02Z','2026-09-01T11:00:05Z','confirmed',1,false,'shingles=2'),
 ('r-d1','r-g2',4,6,'t-delta','t-gamma','2026-09-01T11:00:00Z','2026-09-01T11:00:06Z','probable',2,false,'slots=40'),
 ('r-e1','r-e2',7,8,'t-eps','t-eps','2026-09-02T08:00:00Z','2026-09-02T08:00:05Z','probable',2,true,'slots=30'),
 ('r-h1','r-z1',10,9,'t-eta','t-zeta','2026-09-02T08:59:00Z','2026-09-02T09:00:00Z','possible',3,false,'lookback=1m');
INSERT INTO tenants VALUES
 ('t-alpha','source','confirmed',0,1,'2026-09-01T10:00:00Z','2026-09-01T10:00:00Z'),
 ('t-beta','source','confirmed',0,1,'2026-09-01T10:00:02Z','2026-09-01T10:00:02Z'),
 ('t-delta','both','confirmed',1,1,'2026-09-01T11:00:00Z','2026-09-01T11:00:05Z'),
 ('t-eps','recipient','probable',1,0,'2026-09-02T08:00:05Z','2026-09-02T08:00:05Z'),
 ('t-eta','source','possible',0,1,'2026-09-02T08:59:00Z','2026-09-02T08:59:00Z'),
 ('t-gamma','recipient','confirmed',2,0,'2026-09-01T10:00:06Z','2026-09-01T11:00:06Z'),
 ('t-zeta','recipient','possible',1,0,'2026-09-02T09:00:00Z','2026-09-02T09:00:00Z');
`

const fixtureDirectory = `tenant_id,name,email,language,jurisdiction
t-alpha,Alpha Analytics,ops@alpha.example;legal@alpha.example,en,FR
t-beta,Bêta Santé,dpo@beta-sante.example,fr,FR
t-gamma,Gamma Games,security@gamma.example,en,DE
t-delta,Delta Logistics,it@delta.example,en,NL
t-eps,Epsilon Conseil,contact@epsilon.example,fr,FR
t-eta,Eta Robotics,,en,FR
t-unused,Unused Ltd,hello@unused.example,en,FR
`

// openFixture creates a case DB holding fixtureSQL and the directory.
func openFixture(t testing.TB) (*sql.DB, *Directory) {
	t.Helper()
	db := openDB(t)
	if _, err := db.Exec(fixtureSQL); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	dir, err := ParseDirectory([]byte(fixtureDirectory), "tenants.csv")
	if err != nil {
		t.Fatal(err)
	}
	return db, dir
}

func openDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := casedb.Open(context.Background(), filepath.Join(t.TempDir(), "case.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var testAsOf = time.Date(2026, 9, 10, 9, 0, 0, 0, time.UTC)

func draftFixture(t testing.TB) (*sql.DB, *DraftResult) {
	t.Helper()
	db, dir := openFixture(t)
	res, err := Draft(context.Background(), db, nil, testIncident(t, ""), dir, filepath.Join(t.TempDir(), "outbox"), testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	return db, res
}

func readOutbox(t testing.TB, outbox, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(outbox, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func noticeFor(t testing.TB, res *DraftResult, tenant string) IndexRow {
	t.Helper()
	for _, n := range res.Notices {
		if n.TenantID == tenant || (tenant == "" && n.Kind == "regulator") {
			return n
		}
	}
	t.Fatalf("no notice for %q", tenant)
	return IndexRow{}
}

func mustContain(t testing.TB, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func mustNotContain(t testing.TB, what, s string, bads ...string) {
	t.Helper()
	for _, b := range bads {
		if strings.Contains(strings.ToLower(s), strings.ToLower(b)) {
			t.Errorf("%s contains %q", what, b)
		}
	}
}

func writeFile(t testing.TB, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
