package simulate

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Log columns, in the canonical order (DESIGN.md).
var logColumns = []string{"request_id", "ts", "end_ts", "tenant_id", "model", "prompt_tokens",
	"completion_tokens", "status", "prefill_instance", "decode_instance", "prompt_text", "response_text"}

var (
	zoneParis   = time.FixedZone("", 2*3600)
	zoneNewYork = time.FixedZone("", -5*3600)
	zones       = []*time.Location{time.UTC, zoneParis, zoneNewYork}
)

const tsLayout = "2006-01-02T15:04:05.000Z07:00"

func fmtTs(t int64, z *time.Location) string { return time.UnixMilli(t).In(z).Format(tsLayout) }

// logged is a row as it is written: the clean row with its texts, and
// whether the noise dropped its decode instance.
type logged struct {
	r            *row
	tenant       *tenant
	prompt, resp string
	noDecode     bool
}

func (l *logged) decode() string {
	if l.noDecode {
		return ""
	}
	return l.r.decodeInst
}

func appendJSONString(b []byte, s string) []byte {
	// Texts, ids and names here are printable ASCII, which AppendQuote
	// copies as they are but for '"' and '\\': append those strings whole.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// json renders the row as one JSON line, times in zone z. Absent values
// are null or left out, as the tenant's client writes them.
func (l *logged) json(b []byte, z *time.Location) []byte {
	r := l.r
	absent := func(key string) {
		if l.tenant.nullStyle {
			b = append(b, `,"`...)
			b = append(b, key...)
			b = append(b, `":null`...)
		}
	}
	str := func(key, v string) {
		if v == "" {
			absent(key)
			return
		}
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = appendJSONString(b, v)
	}
	b = append(b, `{"request_id":`...)
	b = appendJSONString(b, r.id)
	b = append(b, `,"ts":"`...)
	b = append(b, fmtTs(r.ts, z)...)
	b = append(b, `","end_ts":"`...)
	b = append(b, fmtTs(r.end, z)...)
	b = append(b, `","tenant_id":`...)
	b = appendJSONString(b, l.tenant.id)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, modelNames[r.model])
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, r.prompt, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, r.completion, 10)
	if r.status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(r.status), 10)
	}
	str("prefill_instance", r.prefill)
	str("decode_instance", l.decode())
	str("prompt_text", l.prompt)
	str("response_text", l.resp)
	return append(b, "}\n"...)
}

func (l *logged) csv(z *time.Location) []string {
	r := l.r
	status := ""
	if r.status != 0 {
		status = strconv.Itoa(r.status)
	}
	return []string{r.id, fmtTs(r.ts, z), fmtTs(r.end, z), l.tenant.id, modelNames[r.model],
		strconv.FormatInt(r.prompt, 10), strconv.FormatInt(r.completion, 10), status,
		r.prefill, l.decode(), l.prompt, l.resp}
}

// copyOf is one more copy of a row to write: in another zone, or damaged.
type copyOf struct {
	l         *logged
	z         *time.Location
	truncated bool
}

// logWriter writes the rotated parts: one per UTC day of ts, gzip-compressed
// JSON Lines (the first day as CSV when Config.CSVPart), plus an empty
// part on the withdrawal day (a quiet rotation).
type logWriter struct {
	dir   string
	cfg   Config
	day   string
	f     *os.File
	bw    *bufio.Writer
	gz    *gzip.Writer
	cw    *csv.Writer // non-nil in a CSV part
	carry []copyOf    // duplicates shipped again in the next part
	files []string
	lines int
	buf   []byte
	empty string // the day of the empty part
	wrote bool   // the empty part exists
	hook  func(*logged)
}

func newLogWriter(dir string, cfg Config) (*logWriter, error) {
	return &logWriter{dir: dir, cfg: cfg, empty: cfg.WindowEnd.UTC().Format(time.DateOnly)}, nil
}

func (w *logWriter) open(day string) error {
	ext := ".jsonl.gz"
	isCSV := w.cfg.CSVPart && day == w.cfg.LogStart.UTC().Format(time.DateOnly)
	if isCSV {
		ext = ".csv.gz"
	}
	name := "requests-" + day + ext
	f, err := os.Create(filepath.Join(w.dir, name))
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	w.f, w.day = f, day
	w.bw = bufio.NewWriterSize(f, 1<<16)
	// Header fields left empty (no name, no time): the bytes depend only on the content.
	w.gz, _ = gzip.NewWriterLevel(w.bw, gzip.BestSpeed)
	w.files = append(w.files, filepath.Join("logs", name))
	w.cw = nil
	if isCSV {
		w.cw = csv.NewWriter(w.gz)
		if err := w.cw.Write(logColumns); err != nil {
			return err
		}
	}
	return nil
}

func (w *logWriter) closePart() error {
	if w.f == nil {
		return nil
	}
	if w.cw != nil {
		w.cw.Flush()
		if err := w.cw.Error(); err != nil {
			return err
		}
	}
	err := w.gz.Close()
	if err == nil {
		err = w.bw.Flush()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if w.day == w.empty {
		return w.writeEmpty()
	}
	return nil
}

// writeEmpty writes a valid gzip file with no lines.
func (w *logWriter) writeEmpty() error {
	name := "requests-" + w.empty + ".1.jsonl.gz"
	f, err := os.Create(filepath.Join(w.dir, name))
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	gz := gzip.NewWriter(f)
	err = gz.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.files = append(w.files, filepath.Join("logs", name))
	w.wrote = true
	return err
}

func (w *logWriter) emit(c copyOf) error {
	w.lines++
	if w.cw != nil {
		return w.cw.Write(c.l.csv(c.z))
	}
	w.buf = c.l.json(w.buf[:0], c.z)
	if c.truncated {
		// A damaged copy: cut before the closing brace, never a valid line.
		cut := 10 + int(mix(uint64(len(w.buf))^c.l.r.n)%uint64(len(w.buf)-12))
		w.buf = append(w.buf[:cut], '\n')
	}
	_, err := w.gz.Write(w.buf)
	return err
}

// write logs one clean row, with its noise.
func (w *logWriter) write(g *generator, r *row, prompt, resp string) error {
	day := time.UnixMilli(r.ts).UTC().Format(time.DateOnly)
	if day != w.day {
		if err := w.closePart(); err != nil {
			return err
		}
		if err := w.open(day); err != nil {
			return err
		}
		for _, c := range w.carry {
			if err := w.emit(c); err != nil {
				return err
			}
		}
		w.carry = w.carry[:0]
	}
	l := &logged{r: r, tenant: &g.tenants[r.tenant], prompt: prompt, resp: resp}
	z := time.UTC
	var extra []copyOf
	if w.cfg.Noise {
		n := g.noise
		l.noDecode = r.noDecode
		if x := n.Float64(); x < 0.2 {
			z = zoneParis
		} else if x < 0.3 {
			z = zoneNewYork
		}
		if n.Float64() < w.cfg.TruncRate && w.cw == nil {
			extra = append(extra, copyOf{l: l, z: z, truncated: true})
			g.sum.Truncated++
		}
		if n.Float64() < w.cfg.DupRate {
			extra = append(extra, copyOf{l: l, z: z})
			g.sum.Duplicates++
		}
		if n.Float64() < w.cfg.OffsetDupRate {
			other := zones[(indexOf(z)+1+n.IntN(2))%3]
			extra = append(extra, copyOf{l: l, z: other})
			g.sum.Duplicates++
		}
	}
	if w.hook != nil {
		w.hook(l)
	}
	if len(extra) > 0 && extra[0].truncated && g.noise.IntN(2) == 0 {
		// The damaged copy may come first: the intact line follows it.
		if err := w.emit(extra[0]); err != nil {
			return err
		}
		extra = extra[1:]
	}
	if err := w.emit(copyOf{l: l, z: z}); err != nil {
		return err
	}
	for _, c := range extra {
		if !c.truncated && g.noise.IntN(2) == 0 {
			w.carry = append(w.carry, c) // re-shipped with the next part
			continue
		}
		if err := w.emit(c); err != nil {
			return err
		}
	}
	return nil
}

func indexOf(z *time.Location) int {
	for i, x := range zones {
		if x == z {
			return i
		}
	}
	return 0
}

// close flushes the last part (and its carried duplicates).
func (w *logWriter) close() ([]string, int, error) {
	for _, c := range w.carry {
		if err := w.emit(c); err != nil {
			return nil, 0, err
		}
	}
	w.carry = nil
	if err := w.closePart(); err != nil {
		return nil, 0, err
	}
	if !w.wrote {
		if err := w.writeEmpty(); err != nil {
			return nil, 0, err
		}
	}
	return w.files, w.lines, nil
}

func (w *logWriter) abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// truthWriter writes the ground truth, computed on the clean rows before
// any noise:
//
//	truth/affected_requests.csv  request_id,tenant_id,ts
//	    every trigger (in scope, in the window, served, prompt_tokens above
//	    the prefill pool in force), sorted by ts then request_id.
//	truth/exposures.csv  source_request_id,trigger_request_id,source_tenant_id,
//	    recipient_tenant_id,kind,leaked_text,slots,self_exposure,
//	    trigger_decode_logged,source_decode_logged
//	    one row per (source, trigger): kind is always "stale" (the source
//	    last wrote slots the trigger got but did not overwrite, by DESIGN.md's
//	    replay); leaked_text is true when the simulator planted a fragment of
//	    the source's logged prompt in the trigger's logged response (whether
//	    it proves the leak is text_pairs.csv's proven); slots counts the source's stale slots;
//	    self_exposure is true when both requests belong to one tenant;
//	    trigger_decode_logged and source_decode_logged are false when the
//	    noise dropped that row's decode instance from the log (the replay
//	    cannot place it: such pairs can only be found as confirmed or
//	    possible, and a missing row shifts later allocations on its pool).
//	    Sorted by trigger ts, trigger_request_id, source_request_id.
//	truth/unknown_slots.csv  trigger_request_id,unknown_slots
//	    per trigger, the stale slots never written since the log began.
//	truth/text_pairs.csv  response_request_id,source_request_id,
//	    response_tenant_id,source_tenant_id,response_model,source_model,
//	    response_ts,proven
//	    every planted copy (the leaked_text exposures), in the order planted;
//	    proven=true when the copy is a strong, specific match by DESIGN.md's
//	    rule (proven.go): the confirmed tier's truth; the sweep's truth is
//	    its proven cross-tenant, same-model rows.
type truthWriter struct {
	dir   string
	files []*os.File
	bws   []*bufio.Writer
	names []string
}

var truthFiles = []struct{ name, header string }{
	{"affected_requests.csv", "request_id,tenant_id,ts"},
	{"exposures.csv", "source_request_id,trigger_request_id,source_tenant_id,recipient_tenant_id,kind,leaked_text,slots,self_exposure,trigger_decode_logged,source_decode_logged"},
	{"unknown_slots.csv", "trigger_request_id,unknown_slots"},
	{"text_pairs.csv", "response_request_id,source_request_id,response_tenant_id,source_tenant_id,response_model,source_model,response_ts,proven"},
}

func newTruthWriter(dir string) (*truthWriter, error) {
	t := &truthWriter{dir: dir}
	for _, tf := range truthFiles {
		f, err := os.Create(filepath.Join(dir, tf.name))
		if err != nil {
			t.abort()
			return nil, fmt.Errorf("simulate: %w", err)
		}
		bw := bufio.NewWriterSize(f, 1<<16)
		bw.WriteString(tf.header + "\n")
		t.files, t.bws = append(t.files, f), append(t.bws, bw)
		t.names = append(t.names, filepath.Join("truth", tf.name))
	}
	return t, nil
}

func (t *truthWriter) trigger(r *row, tenantID string) error {
	fmt.Fprintf(t.bws[0], "%s,%s,%s\n", r.id, tenantID, fmtUTC(r.ts))
	_, err := fmt.Fprintf(t.bws[2], "%s,%d\n", r.id, r.unknown)
	return err
}

func (t *truthWriter) exposure(src, trig, srcTenant, recTenant string, slots int64, leaked, self, trigDecode, srcDecode bool) error {
	_, err := fmt.Fprintf(t.bws[1], "%s,%s,%s,%s,stale,%t,%d,%t,%t,%t\n", src, trig, srcTenant, recTenant, leaked, slots, self, trigDecode, srcDecode)
	return err
}

// textPair records a planted copy: the trigger's response holds a run of
// the source's own prompt words; proven says whether it proves the leak.
func (t *truthWriter) textPair(c *plantedCopy) error {
	_, err := fmt.Fprintf(t.bws[3], "%s,%s,%s,%s,%s,%s,%s,%t\n", c.respID, c.srcID, c.respTenant, c.srcTenant,
		modelNames[c.respModel], modelNames[c.srcModel], fmtUTC(c.ts), c.proven)
	return err
}

func (t *truthWriter) close() ([]string, error) {
	var first error
	for i, f := range t.files {
		if err := t.bws[i].Flush(); err != nil && first == nil {
			first = err
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	t.files = nil
	if first == nil {
		first = os.WriteFile(filepath.Join(t.dir, "README.txt"), []byte(truthReadme), 0o644)
	}
	if first != nil {
		return nil, fmt.Errorf("simulate: truth: %w", first)
	}
	return append(t.names, filepath.Join("truth", "README.txt")), nil
}

const truthReadme = `Ground truth of this simulated incident (leakmap simulate).
Computed on the clean rows, before the noise was added to the logs, by
replaying every decode pool exactly as DESIGN.md says, with the incident
file's allocator and page size.

affected_requests.csv  request_id,tenant_id,ts
  Every trigger: in scope, in the window, served, prompt_tokens above the
  prefill pool in force. Sorted by ts, request_id.
exposures.csv  source_request_id,trigger_request_id,source_tenant_id,
               recipient_tenant_id,kind,leaked_text,slots,self_exposure,
               trigger_decode_logged,source_decode_logged
  One row per (source, trigger). kind is "stale": the source last wrote
  slots the trigger got but did not overwrite. leaked_text=true: a
  fragment of the source's logged prompt was planted in the trigger's
  logged response (text_pairs.csv says whether it proves the leak). slots: the source's
  stale slots. *_decode_logged=false: the log lost that row's decode
  instance (noise), so the replay cannot place it.
  Sorted by trigger ts, trigger_request_id, source_request_id.
unknown_slots.csv  trigger_request_id,unknown_slots
  Per trigger, its stale slots never written since the log began.
real_calls.csv  request_id,prefill_rid,decode_rid,bootstrap_room,
                prefill_instance,decode_instance,cut_at_prefill
  One row per call (request_id is the gateway's id, as everywhere): the
  rids of its records in the real layouts (real/), empty when the call has
  none or the record was lost, the bootstrap_room they share, and whether
  its kept prefill record cut the prompt on a served call (the bug's
  fingerprint).
real_noise.csv  kind,request_id,detail
  The noise planted in the real layouts: lost_prefill and lost_decode
  (detail: the host; the lost decode records are the calls whose canonical
  row lost its decode instance), gateway_duplicate (an extra intact copy
  in an overlapping daily export; detail: the file of the copy), torn_line
  (the last line of that file is a torn copy of the call's row, intact in
  the next export), room_repeat (detail: the room and the earlier call that
  drew it, ten days or more before).
text_pairs.csv  response_request_id,source_request_id,response_tenant_id,
                source_tenant_id,response_model,source_model,response_ts,
                proven
  Every planted copy (the leaked_text exposures): the response holds a
  copied run of 12-16 of the source prompt's own words (never its shared
  template). proven=true: the copy is a strong, specific match by the
  confirmed tier's rule (DESIGN.md; default contamination.evidence): at
  least min_shingles shared shingles and a shared run of min_run_words
  words that carry weight, where a shingle carries none when the
  response's own prompt holds it or the prompts of common_tenants or more
  distinct tenants of the model hold it. A copy that holds a common phrase
  can fall short: a copy, but no proof. The proven rows are the confirmed
  tier's truth; the sweep finds the proven cross-tenant pairs of the same
  model.
edge_cases.csv  name,request_id,trigger
  The planted edge cases (window bounds, thresholds, capacity change,
  statuses, out-of-scope huge prompts, equal times) and whether each is a
  trigger.
capacity_timeline.csv  instance,role,pool_tokens,valid_from
  Every start of every host, as the engines' start-up lines in
  real/engine/text/ state it: what 'leakmap preflight' must recover.
  Equivalent to capacity.csv with the incident file's defaults.
preflight_findings.csv  what 'leakmap preflight' must write as findings.csv:
  every period whose pool is below its model's context, with the inputs
  the host refused in it.
`

func (t *truthWriter) abort() {
	for _, f := range t.files {
		f.Close()
	}
	t.files = nil
}

// fmtUTC matches incident.FormatTime (and the rfc3339 SQL macro): UTC,
// microseconds only when there is a sub-second part.
func fmtUTC(t int64) string {
	u := time.UnixMilli(t).UTC()
	if u.Nanosecond() == 0 {
		return u.Format(time.RFC3339)
	}
	return u.Format("2006-01-02T15:04:05.000000Z07:00")
}

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}

func (g *generator) writeCapacity() error {
	var b strings.Builder
	b.WriteString("instance,role,pool_tokens,valid_from\n")
	for _, ch := range g.timeline() {
		fmt.Fprintf(&b, "%s,%s,%d,%s\n", ch.inst, ch.role, ch.pool, ch.from.UTC().Format(time.RFC3339))
	}
	g.sum.Files = append(g.sum.Files, "capacity.csv")
	return writeFile(filepath.Join(g.dir, "capacity.csv"), []byte(b.String()))
}

// writeTenants writes the directory. With DirectoryGaps, the recipient with
// the latest trigger is left out, and one other affected tenant (a
// cross-tenant source if there is one) is listed with an empty email.
func (g *generator) writeTenants() error {
	missing, invalid := -1, -1
	if g.cfg.DirectoryGaps {
		for i, t := range g.tenants {
			if t.recipient && (missing < 0 || t.lastTrigTs > g.tenants[missing].lastTrigTs) {
				missing = i
			}
		}
		for pass := 0; pass < 2 && invalid < 0; pass++ {
			for i, t := range g.tenants {
				ok := t.crossSrc && !t.recipient
				if pass == 1 {
					ok = t.crossSrc || t.recipient
				}
				if ok && i != missing {
					invalid = i
					break
				}
			}
		}
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write([]string{"tenant_id", "name", "email", "language", "jurisdiction"})
	ids := make([]int, len(g.tenants))
	for i := range ids {
		ids[i] = i
	}
	sort.Slice(ids, func(i, j int) bool { return g.tenants[ids[i]].id < g.tenants[ids[j]].id })
	for _, i := range ids {
		t := g.tenants[i]
		if i == missing {
			g.sum.MissingTenant = t.id
			continue
		}
		email := strings.Join(t.emails, ";")
		if i == invalid {
			g.sum.NoEmailTenant = t.id
			email = ""
		}
		cw.Write([]string{t.id, t.name, email, t.lang, t.juris})
	}
	cw.Flush()
	g.sum.Files = append(g.sum.Files, "tenants.csv")
	return writeFile(filepath.Join(g.dir, "tenants.csv"), []byte(b.String()))
}

// proseDate writes a time as a person reads it in the incident file's
// wording ("9 September 2026, 14:00 UTC", "9 septembre 2026 à 14:00 UTC").
func proseDate(lang string, t time.Time) string {
	t = t.UTC()
	if lang == "fr" {
		months := []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
		day := fmt.Sprint(t.Day())
		if t.Day() == 1 {
			day = "1er"
		}
		return fmt.Sprintf("%s %s %d à %s UTC", day, months[t.Month()-1], t.Year(), t.Format("15:04"))
	}
	return t.Format("2 January 2006, 15:04 UTC")
}
