package notify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/leakmap/leakmap/internal/filing"
)

// Unattributed requests (tenant_id '': engine records no gateway record
// claims) are never a notice recipient and no tenant in the regulator's
// counts, as recipient or as source.
func TestUnattributedRequestsAreNoTenant(t *testing.T) {
	ctx := context.Background()
	figures := func(extra string) (*filing.Facts, *DraftResult) {
		db, dir := openFixture(t)
		if extra != "" {
			if _, err := db.Exec(extra); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Draft(ctx, db, nil, testIncident(t, ""), dir, filepath.Join(t.TempDir(), "outbox"), testAsOf)
		if err != nil {
			t.Fatal(err)
		}
		v, err := filing.Load(ctx, db, testIncident(t, ""), testAsOf)
		if err != nil {
			t.Fatal(err)
		}
		return v, res
	}
	before, resBefore := figures("")
	after, res := figures(`
INSERT INTO requests VALUES
 (11,'chatcmpl-u1','2026-09-01T10:00:03Z','2026-09-01T10:00:05Z','','glm-5.3',2000,10,200,NULL,'d1',NULL,NULL,11,1,11),
 (12,'chatcmpl-u9','2026-09-01T10:00:08Z','2026-09-01T10:00:09Z','','glm-5.3',900000,10,200,'p1','d1',NULL,NULL,12,1,12);
INSERT INTO affected_requests VALUES
 ('chatcmpl-u9',12,'','2026-09-01T10:00:08Z','2026-09-01T10:00:09Z','glm-5.3',900000,10,681280,'p1','d1',0);
INSERT INTO exposures VALUES
 ('chatcmpl-u1','r-g1',11,3,'','t-gamma','2026-09-01T10:00:03Z','2026-09-01T10:00:06Z','possible',3,false,'possible=10m'),
 ('r-a1','chatcmpl-u9',1,12,'t-alpha','','2026-09-01T10:00:00Z','2026-09-01T10:00:08Z','probable',2,false,'slots=10');
`)
	for _, n := range res.Notices {
		if n.Kind != "regulator" && n.TenantID == "" {
			t.Errorf("a notice for the unattributed tenant: %+v", n)
		}
	}
	if res.Drafted != resBefore.Drafted {
		t.Errorf("drafted %d notices, %d without the unattributed requests", res.Drafted, resBefore.Drafted)
	}
	if after.RecipientTenants != before.RecipientTenants || after.SourceTenants != before.SourceTenants || after.TenantsTotal != before.TenantsTotal {
		t.Errorf("tenant counts changed with unattributed requests: %d/%d/%d, before %d/%d/%d",
			after.RecipientTenants, after.SourceTenants, after.TenantsTotal, before.RecipientTenants, before.SourceTenants, before.TenantsTotal)
	}
	if after.AffectedRequests != before.AffectedRequests+1 {
		t.Errorf("affected requests %d, want %d (the unattributed trigger still counts)", after.AffectedRequests, before.AffectedRequests+1)
	}
}
