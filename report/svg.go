package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/catalog"
)

// Charts are built as SVG text here, from the same rows the workbook
// holds; every label is escaped, so the result is safe to inline.

// Tier colours, shared by the charts and the page's CSS.
var tierColor = map[string]string{"confirmed": "#b3261e", "probable": "#e8710a", "possible": "#f2c230"}

func esc(s string) string { return html.EscapeString(s) }

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

// compact writes a token count as 681k, 1.05M.
func compact(v float64) string {
	switch {
	case v >= 1e6:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", v/1e6), "0"), ".0") + "M"
	case v >= 1e3:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v/1e3), ".0") + "k"
	}
	return fmt.Sprintf("%.0f", v)
}

type timeScale struct {
	t0, t1 time.Time
	x0, x1 float64
}

func (s timeScale) x(t time.Time) float64 {
	span := s.t1.Sub(s.t0).Seconds()
	if span <= 0 {
		return s.x0
	}
	return s.x0 + (s.x1-s.x0)*t.Sub(s.t0).Seconds()/span
}

// promptChart draws prompt length (log scale) over time for the in-scope
// models, the prefill pool threshold(s) as step lines, and the exposure
// window shaded.
func promptChart(c *catalog.Catalog, d *caseData) string {
	const W, H, ml, mr, mt, mb = 1000.0, 420.0, 64.0, 150.0, 28.0, 44.0
	inc := d.inc
	pts := d.series.Points
	t0, t1 := inc.WindowStart, inc.WindowEnd
	var maxTok float64 = float64(inc.Capacity.PrefillPoolTokens)
	if inc.Capacity.MaxContextTokens > 0 {
		maxTok = math.Max(maxTok, float64(inc.Capacity.MaxContextTokens))
	}
	for _, p := range pts {
		if p.TS.Before(t0) {
			t0 = p.TS
		}
		if p.TS.After(t1) {
			t1 = p.TS
		}
		maxTok = math.Max(maxTok, float64(p.PromptTokens))
	}
	for _, ch := range inc.Capacity.Timeline {
		if ch.Role == incident.RolePrefill {
			maxTok = math.Max(maxTok, float64(ch.PoolTokens))
		}
	}
	pad := t1.Sub(t0) / 50
	t0, t1 = t0.Add(-pad), t1.Add(pad)
	xs := timeScale{t0, t1, ml, W - mr}
	decades := math.Ceil(math.Log10(maxTok * 1.5))
	y := func(v float64) float64 {
		v = math.Max(v, 1)
		return H - mb - (H-mb-mt)*math.Log10(v)/decades
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="pl-title" class="chart" id="chart-prompt">`, W, H)
	fmt.Fprintf(&b, `<title id="pl-title">%s</title>`, esc(c.MustT("report.chart.prompt_title", "models", strings.Join(inc.Models, c.MustT("common.list_sep")))))
	// Exposure window.
	wx0, wx1 := xs.x(inc.WindowStart), xs.x(inc.WindowEnd)
	fmt.Fprintf(&b, `<rect class="window" x="%s" y="%s" width="%s" height="%s" fill="#fdecea"/>`, f1(wx0), f1(mt), f1(wx1-wx0), f1(H-mb-mt))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="#8a1c1c">%s</text>`, f1(wx0+4), f1(mt+12), esc(c.MustT("report.chart.window")))
	// Decades.
	for k := 0.0; k <= decades; k++ {
		yy := y(math.Pow(10, k))
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#ddd"/>`, f1(ml), f1(W-mr), f1(yy), f1(yy))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#444">%s</text>`, f1(ml-6), f1(yy+4), compact(math.Pow(10, k)))
	}
	timeAxis(c, &b, xs, H-mb, mt)
	// Incident times as dashed markers, labelled horizontally in rows below
	// the top of the plot: a label goes in the first row where it does not
	// run into the one before, so close events ("aware", "contained" four
	// hours apart) never overlap, and no label leaves the picture.
	var rowEnd []float64 // per row, the right end of its last label
	for _, m := range []struct {
		label string
		t     *time.Time
	}{{c.MustT("report.chart.discovered"), inc.DiscoveredAt}, {c.MustT("report.chart.aware"), inc.AwareAt}, {c.MustT("report.chart.contained"), inc.ContainedAt}} {
		if m.t == nil || m.t.Before(t0) || m.t.After(t1) {
			continue
		}
		x := xs.x(*m.t)
		fmt.Fprintf(&b, `<line class="event" x1="%s" x2="%s" y1="%s" y2="%s" stroke="#555" stroke-dasharray="2 3"/>`, f1(x), f1(x), f1(mt), f1(H-mb))
		text := m.label + " " + m.t.UTC().Format("01-02 15:04")
		width := labelWidth(text, 10)
		// Right-aligned on the marker; left of the plot's start it flips right.
		left, anchor, tx := x-3-width, "end", x-3
		if left < ml+2 {
			left, anchor, tx = x+3, "start", x+3
		}
		row := 0
		for row < len(rowEnd) && rowEnd[row] > left-4 {
			row++
		}
		if row == len(rowEnd) {
			rowEnd = append(rowEnd, 0)
		}
		rowEnd[row] = left + width
		fmt.Fprintf(&b, `<text class="event-label" x="%s" y="%s" font-size="10" fill="#333" text-anchor="%s" paint-order="stroke" stroke="#fff" stroke-width="3">%s</text>`,
			f1(tx), f1(mt+13+12*float64(row)), anchor, esc(text))
	}
	// Points: one path per class, a zero-length round-capped segment per
	// request, which keeps a large scatter small.
	var grey, red strings.Builder
	for _, p := range pts {
		dst := &grey
		if p.Trigger {
			dst = &red
		}
		fmt.Fprintf(dst, "M%s %sh0", f1(xs.x(p.TS)), f1(y(float64(p.PromptTokens))))
	}
	if grey.Len() > 0 {
		fmt.Fprintf(&b, `<path class="requests" d="%s" stroke="#5b6b7f" stroke-opacity="0.55" stroke-width="3" stroke-linecap="round" fill="none"/>`, grey.String())
	}
	if red.Len() > 0 {
		// Big dots single out a few triggers; thousands would merge into a band.
		width, opacity := 7, 1.0
		if d.series.Triggers > 500 {
			width, opacity = 4, 0.6
		}
		fmt.Fprintf(&b, `<path class="triggers" d="%s" stroke="#b3261e" stroke-opacity="%.1f" stroke-width="%d" stroke-linecap="round" fill="none"/>`, red.String(), opacity, width)
	}
	// Threshold lines: the default pool, and the prefill instances of the
	// capacity timeline as step lines (instances with the same steps share
	// one line). Each pool level has its own colour, so two close levels
	// (681,280 and 720,896 tokens are 1 px apart on a log axis) still tell
	// apart; labels right of the plot give the exact size and the hosts,
	// spread so none overlap.
	type label struct {
		text, sub, color string
		y                float64
	}
	var labels []label
	palette := []string{"#1f5fa8", "#d9822b", "#2e8b57", "#7b3fa0", "#b8860b", "#c2185b"}
	colour, used := map[int64]string{}, 0
	colourOf := func(tokens int64) string {
		if c, ok := colour[tokens]; ok {
			return c
		}
		c := palette[used%len(palette)]
		colour[tokens] = c
		used++
		return c
	}
	// key names the label's message ({tokens}: the last step's pool); none: no label.
	line := func(key, sub string, steps []step, dash string) {
		for i, s := range steps {
			x0, x1 := xs.x(s.from), xs.x(t1)
			if i+1 < len(steps) {
				x1 = xs.x(steps[i+1].from)
			}
			yy := y(float64(s.tokens))
			fmt.Fprintf(&b, `<path class="threshold" d="M%s %sH%s" stroke="%s" stroke-width="1.8" fill="none"%s/>`, f1(x0), f1(yy), f1(x1), colourOf(s.tokens), dash)
			if i > 0 {
				// The step itself, in the colour of the level it reaches.
				fmt.Fprintf(&b, `<path class="threshold-step" d="M%s %sV%s" stroke="%s" stroke-width="1.2" fill="none"%s/>`,
					f1(x0), f1(y(float64(steps[i-1].tokens))), f1(yy), colourOf(s.tokens), dash)
			}
		}
		if key != "" {
			last := steps[len(steps)-1]
			labels = append(labels, label{c.MustT(key, "tokens", last.tokens), sub, colourOf(last.tokens), y(float64(last.tokens)) + 4})
		}
	}
	if inc.Capacity.MaxContextTokens > 0 {
		colour[inc.Capacity.MaxContextTokens] = "#777"
		line("report.chart.max_context", "", []step{{t0, inc.Capacity.MaxContextTokens}}, ` stroke-dasharray="6 4"`)
	}
	line("report.chart.prefill_pool", c.MustT("report.chart.default_pool"), []step{{t0, inc.Capacity.PrefillPoolTokens}}, "")
	groups := groupSteps(prefillSteps(inc, t0, d.scopeInstances))
	// One label per pool size the hosts reached, naming the hosts.
	levelHosts := map[int64][]string{}
	var levels []int64
	for i, g := range groups {
		if i == 5 {
			labels = append(labels, label{c.MustT("report.chart.more_pools", "n", len(groups)-5), "", "#1f5fa8", H - mb})
			break
		}
		line("", "", g.steps, ` stroke-dasharray="3 2"`)
		for _, st := range g.steps {
			if st.tokens == inc.Capacity.PrefillPoolTokens {
				continue
			}
			if _, ok := levelHosts[st.tokens]; !ok {
				levels = append(levels, st.tokens)
			}
			for _, h := range g.hosts {
				if !slices.Contains(levelHosts[st.tokens], h) {
					levelHosts[st.tokens] = append(levelHosts[st.tokens], h)
				}
			}
		}
	}
	for _, lv := range levels {
		hosts := levelHosts[lv]
		sub := c.MustT("report.chart.on_hosts", "hosts", strings.Join(hosts, c.MustT("common.list_sep")))
		if len(hosts) > 3 {
			sub = c.MustT("report.chart.on_many_hosts", "n", len(hosts), "first", hosts[0])
		}
		labels = append(labels, label{c.MustT("report.chart.pool", "tokens", lv), sub, colourOf(lv), y(float64(lv)) + 4})
	}
	sort.SliceStable(labels, func(i, j int) bool { return labels[i].y < labels[j].y })
	for i := 1; i < len(labels); i++ {
		gap := 13.0
		if labels[i-1].sub != "" {
			gap = 25
		}
		labels[i].y = math.Max(labels[i].y, labels[i-1].y+gap)
	}
	for _, l := range labels {
		fmt.Fprintf(&b, `<text class="pool-label" x="%s" y="%s" font-size="11" fill="%s">%s</text>`, f1(W-mr+6), f1(l.y), l.color, esc(l.text))
		if l.sub != "" {
			fmt.Fprintf(&b, `<text class="pool-hosts" x="%s" y="%s" font-size="10" fill="#555">%s</text>`, f1(W-mr+6), f1(l.y+11), esc(l.sub))
		}
	}
	// Axes frame and legend.
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`, f1(ml), f1(mt), f1(W-mr-ml), f1(H-mb-mt))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="#444">%s</text>`, f1(4), f1(mt-10), esc(c.MustT("report.chart.y_axis")))
	if d.series.Sampled {
		fmt.Fprintf(&b, `<text class="sampled" x="%s" y="%s" font-size="11" text-anchor="end" fill="#444">%s</text>`,
			f1(W-mr), f1(mt-10), esc(c.MustT("report.chart.sampled", "drawn", int64(len(pts)), "total", d.series.Total, "triggers", d.series.Triggers)))
	}
	return b.String() + "</svg>"
}

type step struct {
	from   time.Time
	tokens int64
}

type instSteps struct {
	name  string
	hosts []string // the instances that share these steps
	steps []step
}

// prefillSteps turns the capacity timeline into one step line per prefill
// instance that served the models in scope, starting at the incident default.
func prefillSteps(inc *incident.Incident, t0 time.Time, inScope map[string]bool) []instSteps {
	by := map[string][]step{}
	var names []string
	for _, ch := range inc.Capacity.Timeline {
		if ch.Role != incident.RolePrefill || !inScope[ch.Instance] {
			continue
		}
		if _, ok := by[ch.Instance]; !ok {
			names = append(names, ch.Instance)
			by[ch.Instance] = []step{{t0, inc.Capacity.PrefillPoolTokens}}
		}
		from := ch.ValidFrom
		if from.Before(t0) {
			from = t0
		}
		// A row that changes nothing (a restart with the same pool, as a
		// timeline recovered by preflight has at every boot) draws no step;
		// one at the same instant replaces the step.
		st := by[ch.Instance]
		switch last := &st[len(st)-1]; {
		case last.tokens == ch.PoolTokens:
		case last.from.Equal(from):
			last.tokens = ch.PoolTokens
		default:
			by[ch.Instance] = append(st, step{from, ch.PoolTokens})
		}
	}
	sort.Strings(names)
	out := make([]instSteps, 0, len(names))
	for _, n := range names {
		out = append(out, instSteps{name: n, steps: by[n]})
	}
	return out
}

// groupSteps merges instances whose step lines are identical, naming the
// line after them ("on pf-0, pf-2, pf-3"; "on 5 hosts (pf-0, ...)").
func groupSteps(in []instSteps) []instSteps {
	var out []instSteps
	var members [][]string
	key := func(st []step) string {
		var b strings.Builder
		for _, s := range st {
			fmt.Fprintf(&b, "%d@%d;", s.tokens, s.from.UnixMicro())
		}
		return b.String()
	}
	at := map[string]int{}
	for _, is := range in {
		k := key(is.steps)
		if i, ok := at[k]; ok {
			members[i] = append(members[i], is.name)
			continue
		}
		at[k] = len(out)
		out = append(out, is)
		members = append(members, []string{is.name})
	}
	for i := range out {
		m := members[i]
		name := "on " + strings.Join(m, ", ")
		if len(m) > 3 {
			name = fmt.Sprintf("on %d hosts (%s, ...)", len(m), m[0])
		}
		out[i].name, out[i].hosts = name, m
	}
	return out
}

// timeAxis draws day ticks (or fewer, for long ranges) along the bottom.
func timeAxis(c *catalog.Catalog, b *strings.Builder, xs timeScale, yBase, yTop float64) {
	days := xs.t1.Sub(xs.t0).Hours() / 24
	stepDays := 1
	for float64(stepDays)*14 < days {
		stepDays *= 2
	}
	start := time.Date(xs.t0.Year(), xs.t0.Month(), xs.t0.Day(), 0, 0, 0, 0, time.UTC)
	if days < 2 {
		// A short case: ticks every 6 hours.
		for t := start; !t.After(xs.t1); t = t.Add(6 * time.Hour) {
			if t.Before(xs.t0) {
				continue
			}
			x := xs.x(t)
			fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#999"/>`, f1(x), f1(x), f1(yBase), f1(yBase+4))
			fmt.Fprintf(b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="#444">%s</text>`, f1(x), f1(yBase+16), t.Format("01-02 15h"))
		}
		return
	}
	for t := start; !t.After(xs.t1); t = t.AddDate(0, 0, stepDays) {
		if t.Before(xs.t0) {
			continue
		}
		x := xs.x(t)
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#eee"/>`, f1(x), f1(x), f1(yTop), f1(yBase))
		fmt.Fprintf(b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="#444">%s</text>`, f1(x), f1(yBase+16), t.Format("01-02"))
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#444">%s</text>`, f1(xs.x1), f1(yBase+32), esc(c.MustT("report.chart.utc")))
}

// dailyChart draws affected requests per UTC day as bars and, when the
// case was swept, the sweep's leaking responses as dots beside them: where
// the threshold explains the leak, and where it does not.
func dailyChart(c *catalog.Catalog, days []DayRow) string {
	const W, H, ml, mr, mt, mb = 1000.0, 260.0, 64.0, 20.0, 20.0, 44.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="pd-title" class="chart" id="chart-daily">`, W, H)
	fmt.Fprintf(&b, `<title id="pd-title">%s</title>`, esc(c.MustT("report.daily_chart_title")))
	var top int64
	for _, d := range days {
		top = max(top, d.AffectedRequests, d.SweepLeaking)
	}
	tick := niceStep(float64(top))
	ymax := math.Max(tick, math.Ceil(float64(top)/tick)*tick)
	y := func(v float64) float64 { return H - mb - (H-mb-mt)*v/ymax }
	for v := 0.0; v <= ymax+tick/2; v += tick {
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#ddd"/>`, f1(ml), f1(W-mr), f1(y(v)), f1(y(v)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#444">%s</text>`, f1(ml-6), f1(y(v)+4), thousands(int64(v)))
	}
	n := float64(max(len(days), 1))
	bw := (W - ml - mr) / n
	every := int(math.Ceil(n / 16))
	for i, d := range days {
		x := ml + bw*float64(i)
		h := y(0) - y(float64(d.AffectedRequests))
		fmt.Fprintf(&b, `<rect class="bar" data-day="%s" data-value="%d" x="%s" y="%s" width="%s" height="%s" fill="#b3261e"><title>%s</title></rect>`,
			d.Day.Format("2006-01-02"), d.AffectedRequests, f1(x+bw*0.15), f1(y(float64(d.AffectedRequests))), f1(bw*0.7), f1(h),
			esc(c.MustT("report.chart.day_affected", "day", d.Day.Format("2006-01-02"), "n", d.AffectedRequests)))
		if d.AffectedRequests > 0 && len(days) <= 40 {
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="#222">%s</text>`, f1(x+bw/2), f1(y(float64(d.AffectedRequests))-3), thousands(d.AffectedRequests))
		}
		if i%every == 0 {
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="#444">%s</text>`, f1(x+bw/2), f1(H-mb+16), d.Day.Format("01-02"))
		}
		if d.SweepRan {
			fmt.Fprintf(&b, `<circle class="sweep" data-day="%s" data-value="%d" cx="%s" cy="%s" r="4" fill="#1d4e89"><title>%s</title></circle>`,
				d.Day.Format("2006-01-02"), d.SweepLeaking, f1(x+bw/2), f1(y(float64(d.SweepLeaking))), esc(c.MustT("report.chart.day_sweep", "day", d.Day.Format("2006-01-02"), "n", d.SweepLeaking)))
		}
	}
	if len(days) > 0 && days[0].SweepRan {
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="10" height="10" fill="#b3261e"/><text x="%s" y="%s" font-size="11" fill="#444">%s</text>`, f1(W-mr-290), f1(mt-14), f1(W-mr-276), f1(mt-5), esc(c.MustT("report.chart.legend_affected")))
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="#1d4e89"/><text x="%s" y="%s" font-size="11" fill="#444">%s</text>`, f1(W-mr-150), f1(mt-9), f1(W-mr-142), f1(mt-5), esc(c.MustT("report.chart.legend_sweep")))
	}
	fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#999"/>`, f1(ml), f1(W-mr), f1(y(0)), f1(y(0)))
	return b.String() + "</svg>"
}

// niceStep picks a 1-2-5 grid step giving about four lines up to top.
func niceStep(top float64) float64 {
	if top <= 4 {
		return 1
	}
	raw := top / 4
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// Limits of the tenant map; larger cases show the tenants with the most
// exposures and say so.
const (
	mapMaxRecipients = 60
	mapMaxSources    = 90
)

// tenantMap draws a matrix: one row per recipient tenant, one column per
// source tenant, each cell coloured by the strongest tier.
func tenantMap(c *catalog.Catalog, tm TenantMap) (svg string, note string) {
	recips, srcs := tm.Recipients, tm.Sources
	ri, si := index(recips), index(srcs)
	if len(recips) < tm.AllRecipients || len(srcs) < tm.AllSources {
		note = c.MustT("report.page.tenant_map_capped", "recipients", len(recips), "all_recipients", tm.AllRecipients, "sources", len(srcs), "all_sources", tm.AllSources)
	}
	const cell, ml0, mt0 = 18.0, 8.0, 8.0
	labelW := 8.0 + 7*float64(maxLen(recips))
	labelH := 12.0 + 5.5*float64(maxLen(srcs))
	ml, mt := ml0+labelW, mt0+labelH
	W := ml + cell*float64(len(srcs)) + 20 + labelH/2 // rotated column labels lean right
	H := mt + cell*float64(len(recips)) + 40
	W = math.Max(W, 520)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" role="img" aria-labelledby="tm-title" class="chart" id="chart-tenants">`, W, H, W)
	fmt.Fprintf(&b, `<title id="tm-title">%s</title>`, esc(c.MustT("report.chart.map_title")))
	for i, r := range recips {
		yy := mt + cell*float64(i)
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#222">%s</text>`, f1(ml-4), f1(yy+cell-5), esc(r))
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#f4f6f9"/>`, f1(ml), f1(yy), f1(cell*float64(len(srcs))), f1(cell))
		}
	}
	for j, s := range srcs {
		xx := ml + cell*float64(j) + cell/2 + 3
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="#222" transform="rotate(-60 %s %s)">%s</text>`, f1(xx), f1(mt-4), f1(xx), f1(mt-4), esc(s))
	}
	for _, m := range tm.Cells {
		i, ok1 := ri[m.Recipient]
		j, ok2 := si[m.Source]
		if !ok1 || !ok2 {
			continue
		}
		x, yy := ml+cell*float64(j)+1, mt+cell*float64(i)+1
		tip := c.MustT("report.chart.map_cell", "source", m.Source, "recipient", m.Recipient, "tier", c.MustT("tier."+m.Tier), "n", m.Exposures)
		if m.SelfExposure {
			fmt.Fprintf(&b, `<rect class="cell self" x="%s" y="%s" width="%s" height="%s" fill="#fff" stroke="#777" stroke-dasharray="2 1"><title>%s</title></rect>`,
				f1(x), f1(yy), f1(cell-2), f1(cell-2), esc(c.MustT("report.chart.map_self", "cell", tip)))
			continue
		}
		fmt.Fprintf(&b, `<rect class="cell" data-recipient="%s" data-source="%s" data-tier="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
			esc(m.Recipient), esc(m.Source), esc(m.Tier), f1(x), f1(yy), f1(cell-2), f1(cell-2), tierColor[m.Tier], esc(tip))
	}
	// Legend.
	lx, ly := ml, mt+cell*float64(len(recips))+18
	for _, t := range []string{"confirmed", "probable", "possible"} {
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="12" height="12" fill="%s"/><text x="%s" y="%s" font-size="11" fill="#222">%s</text>`, f1(lx), f1(ly), tierColor[t], f1(lx+16), f1(ly+10), esc(c.MustT("tier."+t)))
		lx += 90
	}
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="12" height="12" fill="#fff" stroke="#777" stroke-dasharray="2 1"/><text x="%s" y="%s" font-size="11" fill="#222">%s</text>`, f1(lx), f1(ly), f1(lx+16), f1(ly+10), esc(c.MustT("report.chart.map_legend_self")))
	fmt.Fprintf(&b, `<text x="4" y="%s" font-size="10" fill="#555">%s</text>`, f1(mt0+6), esc(c.MustT("report.chart.map_axes")))
	return b.String() + "</svg>", note
}

func index(ids []string) map[string]int {
	m := make(map[string]int, len(ids))
	for i, id := range ids {
		m[id] = i
	}
	return m
}

func maxLen(ids []string) int {
	n := 0
	for _, s := range ids {
		n = max(n, len([]rune(s)))
	}
	return n
}

// labelWidth estimates a label's width in px at a font size (DejaVu Sans
// averages about 0.6 em a character).
func labelWidth(s string, size float64) float64 {
	return 0.6 * size * float64(len([]rune(s)))
}
