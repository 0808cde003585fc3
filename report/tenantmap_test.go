package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// The tenant map's query picks the tenants with the most exposures (ties
// by id) and only their cells: it must give what picking them in Go from
// every (recipient, source) pair gives, at every cap.
func TestTenantMapTopTenants(t *testing.T) {
	db, _ := newCase(t)
	ctx := context.Background()
	var pairs []MapRow
	rows, err := db.QueryContext(ctx, `SELECT coalesce(nullif(recipient_tenant_id, ''), '(unattributed)'),
		coalesce(nullif(source_tenant_id, ''), '(unattributed)'), min(tier_rank), count(*), bool_or(self_exposure)
		FROM exposures GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m MapRow
		if err := rows.Scan(&m.Recipient, &m.Source, &m.TierRank, &m.Exposures, &m.SelfExposure); err != nil {
			t.Fatal(err)
		}
		m.Tier = []string{"", "confirmed", "probable", "possible"}[m.TierRank]
		pairs = append(pairs, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	recipient := func(m MapRow) string { return m.Recipient }
	source := func(m MapRow) string { return m.Source }
	nr, ns := len(top(pairs, recipient, len(pairs))), len(top(pairs, source, len(pairs)))
	if nr < 3 || ns < 3 {
		t.Fatalf("the test case has %d recipients and %d sources: too few to cap", nr, ns)
	}
	for _, c := range [][2]int{{1, 1}, {2, 1}, {1, 3}, {nr - 1, ns - 1}, {nr, ns}, {60, 90}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			got, err := loadTenantMap(ctx, db, c[0], c[1])
			if err != nil {
				t.Fatal(err)
			}
			want := TenantMap{Recipients: top(pairs, recipient, c[0]), Sources: top(pairs, source, c[1]),
				AllRecipients: nr, AllSources: ns}
			for _, m := range pairs {
				if slices.Contains(want.Recipients, m.Recipient) && slices.Contains(want.Sources, m.Source) {
					want.Cells = append(want.Cells, m)
				}
			}
			slices.SortFunc(want.Cells, func(a, b MapRow) int {
				return cmp.Or(cmp.Compare(a.Recipient, b.Recipient), cmp.Compare(a.TierRank, b.TierRank), cmp.Compare(a.Source, b.Source))
			})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tenant map capped at %v:\n got %+v\nwant %+v", c, got, want)
			}
		})
	}
}

// top returns up to n tenants with the most exposures (ties by id), in id order.
func top(pairs []MapRow, key func(MapRow) string, n int) []string {
	count := map[string]int64{}
	for _, m := range pairs {
		count[key(m)] += m.Exposures
	}
	ids := slices.Collect(maps.Keys(count))
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b)) })
	ids = ids[:min(n, len(ids))]
	slices.Sort(ids)
	return ids
}
