package notify

import (
	"slices"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
)

// tierOrder is the attachment's tiers, strongest first; unknown and none
// are not tiers between customers: no other tenant was identified.
var tierOrder = []string{"confirmed", "probable", "possible", "unknown", "none"}

// crossTier says whether t is evidence between customers.
func crossTier(t string) bool { return t == "confirmed" || t == "probable" || t == "possible" }

// describeRequests fills what the notice says about the attached requests:
// per role, the strongest cross-tenant tier and the requests counted per
// tier; the real span of the listed requests and how many came before the
// window; and the meaning of every column and of each value that occurs.
func describeRequests(c *catalog.Catalog, v *tenantView, rows []requestRow, windowStart time.Time) {
	count := map[string]map[string]int{"affected": {}, "exposed": {}}
	for i, r := range rows {
		count[r.Role][r.Tier]++
		if r.Role == "affected" && r.Own {
			v.OwnMatches = true
		}
		if ts, err := time.Parse(time.RFC3339, r.TS); err == nil {
			if i == 0 || ts.Before(v.FirstTS) {
				v.FirstTS = ts
			}
			if i == 0 || ts.After(v.LastTS) {
				v.LastTS = ts
			}
			if ts.Before(windowStart) {
				v.BeforeWindow++
			}
		}
	}
	twice, twiceBefore := twiceListed(rows, windowStart)
	v.TwiceListed, v.AttachmentRequests = twice, len(rows)-twice
	v.BeforeWindow -= twiceBefore // counted above once a row
	v.SourceTier, v.SourceBreakdown, v.ExposedRequests = summarise(c, count["exposed"])
	v.RecipientTier, v.RecipientBreakdown, v.AffectedRequests = summarise(c, count["affected"])

	for _, col := range []string{"request_id", "ts", "role", "tier", "own"} {
		var meaning string
		if col == "own" {
			meaning = ownMeaning(c, len(count["affected"]) > 0, len(count["exposed"]) > 0)
		} else {
			meaning = c.MustT("attachment." + col + ".meaning")
		}
		v.Columns = append(v.Columns, term{c.MustT("attachment." + col + ".name"), meaning})
	}
	roles := termGroup{Column: c.MustT("attachment.role.name")}
	for _, role := range []string{"affected", "exposed"} {
		if len(count[role]) == 0 {
			continue
		}
		meaning := "role_meaning." + role
		if v.SelfOnly {
			meaning = "role_meaning_self." + role
		}
		roles.Terms = append(roles.Terms, term{c.MustT("role." + role), c.MustT(meaning)})
	}
	v.Values = []termGroup{roles, tierTerms(c, count)}
}

// twiceListed counts the requests that have a row for each role (a
// request whose response may hold another tenant's data, and whose own
// data may then have reached another tenant), which the notice counts
// once, and how many of them were received before windowStart. A role
// lists a request once; the smaller role's ids are held, sorted, not
// every row's in a map: a large tenant has a million rows (16 bytes an id
// here, the rows' own strings).
func twiceListed(rows []requestRow, windowStart time.Time) (twice, before int) {
	affected := 0
	for _, r := range rows {
		if r.Role == "affected" {
			affected++
		}
	}
	small, other, n := "affected", "exposed", affected
	if exposed := len(rows) - affected; exposed < affected {
		small, other, n = other, small, exposed
	}
	if n == 0 {
		return 0, 0
	}
	ids := make([]string, 0, n)
	for _, r := range rows {
		if r.Role == small {
			ids = append(ids, r.RequestID)
		}
	}
	slices.Sort(ids)
	for _, r := range rows {
		if r.Role != other {
			continue
		}
		if _, ok := slices.BinarySearch(ids, r.RequestID); ok {
			twice++
			if ts, err := time.Parse(time.RFC3339, r.TS); err == nil && ts.Before(windowStart) {
				before++
			}
		}
	}
	return twice, before
}

// tierTerms explains each tier of the attachment once. With one role the
// meaning is that role's (your request, their response; or the reverse);
// with both, each tier is said of a response and an earlier request, and
// one sentence says whose is which on each role's rows, so no tier is
// explained twice.
func tierTerms(c *catalog.Catalog, count map[string]map[string]int) termGroup {
	col := c.MustT("attachment.tier.name")
	g := termGroup{Column: col}
	var side string
	switch {
	case len(count["affected"]) > 0 && len(count["exposed"]) > 0:
		side = "both"
		g.Intro = c.MustT("tenant.file.values_both", "name", col, "affected", c.MustT("role.affected"), "exposed", c.MustT("role.exposed"))
	case len(count["exposed"]) > 0:
		side = "source"
	default:
		side = "recipient"
	}
	for _, t := range tierOrder {
		if count["affected"][t]+count["exposed"][t] > 0 {
			g.Terms = append(g.Terms, term{c.MustT("tier." + t), c.MustT("tier_meaning." + side + "." + t)})
		}
	}
	return g
}

// ownMeaning explains the own-requests column for the rows the file has:
// yes or no on affected rows, empty on exposed rows (it is said of the
// responses the tenant received).
func ownMeaning(c *catalog.Catalog, affected, exposed bool) string {
	if !affected {
		return c.MustT("attachment.own.exposed_only")
	}
	empty := ""
	if exposed {
		empty = c.MustT("attachment.own.empty", "exposed", c.MustT("role.exposed"))
	}
	return c.MustT("attachment.own.meaning", "yes", c.MustT("common.yes"), "no", c.MustT("common.no"), "empty", empty)
}

// summarise gives the strongest cross-tenant tier of one role's requests,
// their count per tier in words (empty when the strongest tier is every
// request's: the notice says so instead of counting them twice), and their
// number.
func summarise(c *catalog.Catalog, byTier map[string]int) (strongest, breakdown string, n int) {
	var parts []string
	for _, t := range tierOrder {
		k := byTier[t]
		if k == 0 {
			continue
		}
		n += k
		if strongest == "" && crossTier(t) {
			strongest = t
		}
		parts = append(parts, c.MustT("tier_count."+t, "n", k))
	}
	if len(parts) == 1 && strongest != "" {
		return strongest, "", n
	}
	for i, p := range parts {
		if i > 0 {
			breakdown += c.MustT("common.list_sep")
		}
		breakdown += p
	}
	return strongest, breakdown, n
}

// attachmentHeader is the attachment's header row in c's language.
func attachmentHeader(c *catalog.Catalog) []string {
	var h []string
	for _, col := range []string{"request_id", "ts", "role", "tier", "own"} {
		h = append(h, c.MustT("attachment."+col+".name"))
	}
	return h
}
