package simulate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/csvtest"
)

// readMaybeGz reads a file, gunzipping a .gz one.
func readMaybeGz(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// engineRec is one engine record read back: its two events.
type engineRec struct {
	host, file                string
	rid                       string
	recv, fin                 int64 // µs, UTC
	room                      int64
	bhost                     string
	promptTok, completion     int64
	finishType, finishMsg     string
	statusCode                int64
	received, finished, lines int
}

var (
	isoRe       = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$`)
	pgTsRe      = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{0,2}[1-9])?$`)
	engineName  = regexp.MustCompile(`^(.+)_(\d+)\.log(\.(\d{4}-\d\d-\d\d_\d\d)(\.gz)?)?$`)
	objKeyOrder = []string{"rid", "http_worker_ipc", "video_data", "use_audio_in_video"}
)

func parseIso(t *testing.T, s string) int64 {
	t.Helper()
	if !isoRe.MatchString(s) {
		t.Fatalf("timestamp %q is not a naive isoformat time", s)
	}
	layout := "2006-01-02T15:04:05"
	if len(s) > 19 {
		layout += ".000000"
	}
	v, err := time.Parse(layout, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UnixMicro()
}

func parsePgTs(t *testing.T, s string) int64 {
	t.Helper()
	if !pgTsRe.MatchString(s) {
		t.Fatalf("startTime/endTime %q is not psql's timestamp(3)", s)
	}
	v, err := time.Parse("2006-01-02 15:04:05.999", s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UnixMilli()
}

// readEngine reads every engine file under dir/real/engine: records by
// role and rid, checking file names, line shapes and order on the way.
func readEngine(t *testing.T, dir string) (map[string]map[string]*engineRec, map[string]bool) {
	t.Helper()
	recs := map[string]map[string]*engineRec{"prefill": {}, "decode": {}}
	seen := map[string]bool{} // "gz", "dotted", "live", "level0", "level1", "nofraction"
	files, _ := filepath.Glob(filepath.Join(dir, "real", "engine", "*", "*", "*"))
	if len(files) == 0 {
		t.Fatal("no engine files")
	}
	for _, path := range files {
		role := filepath.Base(filepath.Dir(path))
		m := engineName.FindStringSubmatch(filepath.Base(path))
		if m == nil || m[2] != "0" {
			t.Fatalf("%s: not a {host}_{rank}.log[.YYYY-MM-DD_HH[.gz]] name", path)
		}
		host := m[1]
		if strings.Contains(host, ".") {
			seen["dotted"] = true
		}
		if m[5] != "" {
			seen["gz"] = true
		}
		if m[3] == "" {
			seen["live"] = true
		}
		var partStart int64 = -1
		if m[4] != "" {
			v, _ := time.Parse("2006-01-02_15", m[4])
			partStart = v.UnixMicro()
		}
		data := readMaybeGz(t, path)
		if len(data) == 0 || data[len(data)-1] != '\n' {
			t.Fatalf("%s: empty or not newline-terminated", path)
		}
		var last int64
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !strings.HasPrefix(line, `{"timestamp": "`) || !strings.Contains(line, `", "event": "request.`) {
				t.Fatalf("%s:%d: not json.dumps' order and separators: %.80s", path, i+1, line)
			}
			if !strings.Contains(line, `"obj": {"rid": "`) || !strings.Contains(line, `"custom_labels": null`) {
				t.Fatalf("%s:%d: obj not in GenerateReqInput order with nulls kept", path, i+1)
			}
			var ev struct {
				Timestamp, Event, Rid string
				Obj                   map[string]json.RawMessage
				Out                   *struct {
					MetaInfo struct {
						ID               string
						FinishReason     map[string]any `json:"finish_reason"`
						PromptTokens     int64          `json:"prompt_tokens"`
						CompletionTokens int64          `json:"completion_tokens"`
						E2ELatency       float64        `json:"e2e_latency"`
					} `json:"meta_info"`
				}
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			ts := parseIso(t, ev.Timestamp)
			if !strings.Contains(ev.Timestamp, ".") {
				seen["nofraction"] = true
			}
			if ts < last {
				t.Fatalf("%s:%d: lines out of time order", path, i+1)
			}
			last = ts
			if partStart >= 0 && (ts < partStart || ts >= partStart+2*3600e6) {
				t.Fatalf("%s:%d: %s outside the part's hour", path, i+1, ev.Timestamp)
			}
			if _, ok := ev.Obj["sampling_params"]; ok {
				seen["level1"] = true
			} else {
				seen["level0"] = true
			}
			var room int64
			json.Unmarshal(ev.Obj["bootstrap_room"], &room)
			var bhost, objRid string
			json.Unmarshal(ev.Obj["bootstrap_host"], &bhost)
			json.Unmarshal(ev.Obj["rid"], &objRid)
			if objRid != ev.Rid || room <= 0 || room >= 1<<31 {
				t.Fatalf("%s:%d: rid %q obj.rid %q room %d", path, i+1, ev.Rid, objRid, room)
			}
			r := recs[role][ev.Rid]
			if r == nil {
				r = &engineRec{host: host, file: path, rid: ev.Rid, room: room, bhost: bhost}
				recs[role][ev.Rid] = r
			}
			if r.host != host || r.room != room {
				t.Fatalf("%s:%d: rid %s on two hosts or rooms", path, i+1, ev.Rid)
			}
			switch ev.Event {
			case "request.received":
				r.received++
				r.recv = ts
				if ev.Out != nil {
					t.Fatalf("%s:%d: a received event with out", path, i+1)
				}
			case "request.finished":
				r.finished++
				r.fin = ts
				if ev.Out == nil || ev.Out.MetaInfo.ID != ev.Rid {
					t.Fatalf("%s:%d: a finished event without its meta_info", path, i+1)
				}
				mi := ev.Out.MetaInfo
				r.promptTok, r.completion = mi.PromptTokens, mi.CompletionTokens
				r.finishType, _ = mi.FinishReason["type"].(string)
				r.finishMsg, _ = mi.FinishReason["message"].(string)
				if sc, ok := mi.FinishReason["status_code"].(float64); ok {
					r.statusCode = int64(sc)
				}
			default:
				t.Fatalf("%s:%d: event %q", path, i+1, ev.Event)
			}
			r.lines++
		}
	}
	for role, m := range recs {
		for rid, r := range m {
			if r.received != 1 || r.finished != 1 || r.fin < r.recv {
				t.Errorf("%s record %s: %d received, %d finished events", role, rid, r.received, r.finished)
			}
		}
	}
	return recs, seen
}

type gwRec struct {
	m    map[string]string
	file string
}

// readGateway reads the spend log exports: every intact row, and the torn lines.
func readGateway(t *testing.T, dir string) (rows []gwRec, torn int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "real", "gateway", "*"))
	if len(files) < 10 {
		t.Fatalf("%d gateway files, want daily parts", len(files))
	}
	for _, path := range files {
		if !strings.HasSuffix(path, ".csv.gz") {
			t.Fatalf("%s: not a .csv.gz", path)
		}
		data := readMaybeGz(t, path)
		lines := strings.SplitAfter(string(data), "\n")
		if lines[0] != strings.Join(gatewayColumns, ",")+"\n" {
			t.Fatalf("%s: header %q", path, lines[0])
		}
		cr := csv.NewReader(bytes.NewReader(data))
		cr.ReuseRecord = false
		header, _ := cr.Read()
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				torn++
				if bytes.HasSuffix(data, []byte("\n")) {
					t.Errorf("%s: a bad record (%v) that is not a torn last line", path, err)
				}
				break
			}
			m := map[string]string{}
			for i, c := range header {
				m[c] = rec[i]
			}
			rows = append(rows, gwRec{m, path})
		}
	}
	return rows, torn
}

// TestRealLayouts generates a noisy case and reads the real layouts back
// with encoding/json and encoding/csv: their shapes are the real programs'
// (log-layouts.md), they hold the same calls as the canonical logs, the bug's
// fingerprint is where the truth's triggers are, and the planted noise is
// what the summary and truth/real_noise.csv say.
func TestRealLayouts(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig("sorted", true)
	clean := map[string]*logged{}
	sum, err := generate(context.Background(), nil, dir, cfg, func(l *logged) { clean[l.r.id] = l })
	if err != nil {
		t.Fatal(err)
	}
	rs := sum.Real
	trig := map[string]bool{}
	for _, id := range csvtest.ReadColumn(t, filepath.Join(dir, "truth", "affected_requests.csv"), "request_id") {
		trig[id] = true
	}

	// The proxy: one intact row per call, keyed by the canonical id.
	rows, torn := readGateway(t, dir)
	if torn != 1 || rs.TornLines != 1 {
		t.Errorf("torn lines: read %d, summary %d, want 1", torn, rs.TornLines)
	}
	byID := map[string]map[string]string{}
	copies := 0
	for _, g := range rows {
		m := g.m
		if prev, ok := byID[m["request_id"]]; ok {
			copies++
			if !maps(prev, m) {
				t.Errorf("gateway row %s: two copies differ", m["request_id"])
			}
			continue
		}
		byID[m["request_id"]] = m
	}
	if len(byID) != cfg.Requests || rs.GatewayRows != cfg.Requests || copies != rs.GatewayDuplicates || copies == 0 {
		t.Errorf("gateway: %d distinct rows, %d copies; summary %d rows, %d duplicates; want %d rows", len(byID), copies,
			rs.GatewayRows, rs.GatewayDuplicates, cfg.Requests)
	}
	for id, l := range clean {
		m := byID[id]
		if m == nil {
			t.Fatalf("call %s has no gateway row", id)
		}
		r := l.r
		start, end := parsePgTs(t, m["startTime"]), parsePgTs(t, m["endTime"])
		if start > r.ts || start < r.ts-100 || end < r.end || (l.noDecode && (start != r.ts || end != r.end)) {
			t.Errorf("%s: proxy times %s..%s, canonical %d..%d", id, m["startTime"], m["endTime"], r.ts, r.end)
		}
		ok := served(r.status)
		if m["team_id"] != l.tenant.id || m["model_group"] != modelNames[r.model] || (m["status"] == "success") != ok ||
			(ok && (m["prompt_tokens"] != strconv.FormatInt(r.prompt, 10) || m["completion_tokens"] != strconv.FormatInt(r.completion, 10))) {
			t.Errorf("%s: gateway row %v, canonical %+v", id, m, canonOf(l))
		}
		if ok != strings.HasPrefix(id, "chatcmpl-") {
			t.Errorf("%s: a served call's id is the decode rid (chatcmpl-...), a failed one the proxy's uuid", id)
		}
		var meta map[string]any
		if err := json.Unmarshal([]byte(m["metadata"]), &meta); err != nil || meta["user_api_key_team_id"] != l.tenant.id {
			t.Fatalf("%s: metadata %q: %v", id, m["metadata"], err)
		}
		if !ok {
			ei, _ := meta["error_information"].(map[string]any)
			if ei["error_code"] != strconv.Itoa(r.status) {
				t.Errorf("%s: failure with error_information %v, status %d", id, ei, r.status)
			}
		}
		var msgs []struct{ Role, Content string }
		var resp struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if l.prompt != "" {
			if err := json.Unmarshal([]byte(m["messages"]), &msgs); err != nil || len(msgs) != 1 || msgs[0].Content != l.prompt {
				t.Errorf("%s: messages %q, prompt %q (%v)", id, m["messages"], l.prompt, err)
			}
		} else if m["messages"] != "{}" {
			t.Errorf("%s: messages %q for a tenant that logs no text", id, m["messages"])
		}
		if l.resp != "" {
			if err := json.Unmarshal([]byte(m["response"]), &resp); err != nil || len(resp.Choices) != 1 || resp.Choices[0].Message.Content != l.resp {
				t.Errorf("%s: response %q, want content %q (%v)", id, m["response"], l.resp, err)
			}
		}
		if m["user"] != "" || m["organization_id"] != "" || m["cache_hit"] != "False" {
			t.Errorf("%s: user %q organization_id %q cache_hit %q", id, m["user"], m["organization_id"], m["cache_hit"])
		}
	}

	// The engines: prefill and decode records per call, joined by the truth.
	recs, seen := readEngine(t, dir)
	for _, k := range []string{"gz", "dotted", "live", "level0", "level1"} {
		if !seen[k] {
			t.Errorf("no engine file or line shows %s", k)
		}
	}
	calls := csvtest.Read(t, filepath.Join(dir, "truth", "real_calls.csv"))
	if len(calls) != cfg.Requests {
		t.Fatalf("real_calls.csv: %d rows, want %d", len(calls), cfg.Requests)
	}
	nPrefill, nDecode, nCut, nCutServed := 0, 0, 0, 0
	rooms := map[int64][]string{}
	for _, c := range calls {
		l := clean[c["request_id"]]
		r := l.r
		var p, d *engineRec
		if c["prefill_rid"] != "" {
			p = recs["prefill"][c["prefill_rid"]]
			nPrefill++
		}
		if c["decode_rid"] != "" {
			d = recs["decode"][c["decode_rid"]]
			nDecode++
		}
		hasEngine := r.prefill != "" && r.decode >= 0
		if (p != nil) != (c["prefill_rid"] != "") || (d != nil) != (c["decode_rid"] != "") ||
			(!hasEngine && (p != nil || d != nil)) {
			t.Fatalf("%s: truth %v, records prefill %v decode %v", r.id, c, p, d)
		}
		if d == nil && hasEngine && !l.noDecode {
			t.Errorf("%s: decode record lost, but the canonical row keeps its decode instance", r.id)
		}
		if p != nil && d != nil && (p.rid == d.rid || p.room != d.room || p.bhost != d.bhost || p.bhost != prefillIP(r.prefill)) {
			t.Errorf("%s: prefill %s and decode %s: rids must differ, room and bootstrap_host agree", r.id, p.rid, d.rid)
		}
		if p != nil {
			rooms[p.room] = append(rooms[p.room], r.id)
			if p.host != r.prefill || p.recv/1000 < r.ts-300 || p.recv/1000 > r.ts+300 {
				t.Errorf("%s: prefill record on %s at %d, canonical %s at %d", r.id, p.host, p.recv, r.prefill, r.ts)
			}
		}
		if d != nil {
			if d.host != r.decodeInst || d.recv/1000 != r.ts || d.fin/1000 != r.end || d.promptTok != r.prompt {
				t.Errorf("%s: decode record %+v, canonical %+v", r.id, d, canonOf(l))
			}
			if served(r.status) {
				if d.rid != r.id || d.finishType == "abort" || d.completion != r.completion {
					t.Errorf("%s: served call's decode record %+v", r.id, d)
				}
			} else if d.finishType != "abort" || d.statusCode != 500 {
				t.Errorf("%s: failed call's decode record %+v", r.id, d)
			}
		}
		// The fingerprint: a cut prefill record exactly where the prompt
		// is over the host's pool; every served trigger whose prefill
		// record was kept shows it.
		cut := p != nil && p.promptTok == 1 && p.finishType == "abort"
		if p != nil && p.finishType != "abort" && (p.finishType != "length" || p.promptTok != r.prompt) {
			t.Errorf("%s: prefill record %+v", r.id, p)
		}
		if cut {
			nCut++
			want := "Input length (" + strconv.FormatInt(r.prompt, 10) + " tokens) exceeds the maximum allowed length ("
			if !strings.HasPrefix(p.finishMsg, want) || !strings.HasSuffix(p.finishMsg, "Use a shorter input or enable --allow-auto-truncate.") ||
				p.statusCode != 400 || p.completion != 0 {
				t.Errorf("%s: cut prefill record %+v", r.id, p)
			}
			if served(r.status) {
				nCutServed++
			}
		}
		if p != nil && cut != (r.prompt > threshold(t, dir, r)) {
			t.Errorf("%s: cut %t, prompt %d on %s", r.id, cut, r.prompt, r.prefill)
		}
		if trig[r.id] && p != nil && !cut {
			t.Errorf("trigger %s: its prefill record does not cut the prompt", r.id)
		}
		if (c["cut_at_prefill"] == "true") != (cut && served(r.status)) {
			t.Errorf("%s: real_calls.csv cut_at_prefill %s", r.id, c["cut_at_prefill"])
		}
	}
	// The scheduler's error line in the host's text log names the same rid.
	textLog := map[string]string{}
	texts, _ := filepath.Glob(filepath.Join(dir, "real", "engine", "text", "*"))
	for _, f := range texts {
		textLog[f] = string(readMaybeGz(t, f))
	}
	for _, p := range recs["prefill"] {
		if p.finishType != "abort" {
			continue
		}
		found := false
		for f, text := range textLog {
			if strings.HasPrefix(filepath.Base(f), p.host+".log") && strings.Contains(text, "self.rid='"+p.rid+"'") {
				found = true
			}
		}
		if !found {
			t.Errorf("cut prefill record %s on %s: no error line names it in the host's text log", p.rid, p.host)
		}
	}
	if nPrefill != rs.PrefillRecords || nDecode != rs.DecodeRecords || len(recs["prefill"]) != nPrefill || len(recs["decode"]) != nDecode ||
		nCut != rs.PrefillCuts || nCutServed != rs.CutAtPrefill || nCutServed < len(trig)/2 {
		t.Errorf("records: prefill %d/%d/%d, decode %d/%d/%d, cuts %d/%d, served cuts %d/%d, triggers %d",
			nPrefill, rs.PrefillRecords, len(recs["prefill"]), nDecode, rs.DecodeRecords, len(recs["decode"]),
			nCut, rs.PrefillCuts, nCutServed, rs.CutAtPrefill, len(trig))
	}

	// The noise, as truth/real_noise.csv lists it.
	kinds := map[string]int{}
	for _, n := range csvtest.Read(t, filepath.Join(dir, "truth", "real_noise.csv")) {
		kinds[n["kind"]]++
		if n["kind"] == "room_repeat" {
			f := strings.Fields(n["detail"])
			room, _ := strconv.ParseInt(f[0], 10, 64)
			ids := rooms[room]
			if len(ids) != 2 || !slices.Contains(ids, n["request_id"]) || !slices.Contains(ids, f[1]) ||
				clean[n["request_id"]].r.ts-clean[f[1]].r.ts < roomRepeatAfter.Milliseconds() {
				t.Errorf("room repeat %v: calls %v", n, ids)
			}
		}
	}
	repeats := 0
	for _, ids := range rooms {
		if len(ids) > 1 {
			repeats++
		}
	}
	if kinds["lost_prefill"] != rs.LostPrefill || kinds["lost_decode"] != rs.LostDecode || kinds["room_repeat"] != rs.RoomRepeats ||
		kinds["gateway_duplicate"] != rs.GatewayDuplicates || kinds["torn_line"] != rs.TornLines || repeats != rs.RoomRepeats ||
		rs.LostPrefill == 0 || rs.LostDecode != sum.MissingDecode || rs.LostDecode == 0 || rs.RoomRepeats == 0 {
		t.Errorf("noise: listed %v, rooms repeated %d, summary %+v (missing decode %d)", kinds, repeats, rs, sum.MissingDecode)
	}
	if rs.PrefillRecords+rs.LostPrefill != rs.DecodeRecords+rs.LostDecode {
		t.Errorf("calls with engine records: %d prefill + %d lost, %d decode + %d lost", rs.PrefillRecords, rs.LostPrefill, rs.DecodeRecords, rs.LostDecode)
	}

	// incident-real.yaml: incident.yaml's facts plus sources that cover
	// every real file exactly once.
	var plain, real map[string]any
	for name, dst := range map[string]*map[string]any{"incident.yaml": &plain, "incident-real.yaml": &real} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, dst); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	incR, err := incident.Load(filepath.Join(dir, "incident-real.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(incR.Sources) != 1+2*len(modelNames) || incR.Join.RoomTolerance != 30*time.Second || incR.Join.GatewayTolerance != 2*time.Second {
		t.Errorf("incident-real.yaml: %d sources, join %+v", len(incR.Sources), incR.Join)
	}
	srcs, _ := real["sources"].([]any)
	delete(real, "sources")
	delete(real, "join")
	if !maps2(plain, real) {
		t.Errorf("incident-real.yaml states other facts than incident.yaml:\n%v\n%v", plain, real)
	}
	covered := map[string]int{}
	for _, s := range srcs {
		m := s.(map[string]any)
		if m["layout"] == "sglang" && (m["model"] == nil || m["timezone"] != "UTC" || (m["role"] != "prefill" && m["role"] != "decode")) {
			t.Errorf("source %v", m)
		}
		for _, p := range m["paths"].([]any) {
			got, _ := filepath.Glob(filepath.Join(dir, p.(string)))
			for _, f := range got {
				covered[f]++
			}
		}
	}
	all, _ := filepath.Glob(filepath.Join(dir, "real", "*", "*"))
	more, _ := filepath.Glob(filepath.Join(dir, "real", "engine", "*", "*", "*"))
	n := 0
	for _, f := range append(all, more...) {
		if st, _ := os.Stat(f); st.IsDir() {
			continue
		}
		n++
		if covered[f] != 1 {
			t.Errorf("%s: covered by %d sources", f, covered[f])
		}
	}
	if n != rs.EngineFiles+rs.GatewayFiles || len(covered) != n {
		t.Errorf("%d real files, summary %d engine + %d gateway, %d covered", n, rs.EngineFiles, rs.GatewayFiles, len(covered))
	}
}

// threshold is the prefill pool in force for a row's prefill host, from
// the capacity timeline the simulator wrote.
func threshold(t *testing.T, dir string, r *row) int64 {
	pool := int64(681280)
	var best string
	for _, m := range capacityRows(t, dir) {
		if m["instance"] == r.prefill && m["role"] == "prefill" && parseTs(t, m["valid_from"]) <= r.ts && m["valid_from"] >= best {
			best = m["valid_from"]
			pool, _ = strconv.ParseInt(m["pool_tokens"], 10, 64)
		}
	}
	return pool
}

var capCache = map[string][]map[string]string{}

func capacityRows(t *testing.T, dir string) []map[string]string {
	if c, ok := capCache[dir]; ok {
		return c
	}
	c := csvtest.Read(t, filepath.Join(dir, "capacity.csv"))
	capCache[dir] = c
	return c
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func maps2(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestPythonAndPostgresForms pins the byte forms the real layouts depend on.
func TestPythonAndPostgresForms(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{pyFloat(1), "1.0"}, {pyFloat(0.6), "0.6"}, {pyFloat(6.370123), "6.370123"}, {pyFloat(1e-05), "1e-05"},
		{pyFloat(1787788800.086645), "1787788800.086645"}, {numericFloat(1e-05), "0.00001"},
		{pgFloat8(0.0015077), "0.0015077"}, {pgFloat8(5.6e-05), "5.6e-05"}, {pgFloat8(0), "0"},
		{isoLocal(1787788800000000), "2026-08-27T00:00:00"}, {isoLocal(1787788800000010), "2026-08-27T00:00:00.000010"},
		{pgTimestamp3(1787788800500), "2026-08-27 00:00:00.5"}, {pgTimestamp3(1787788800012), "2026-08-27 00:00:00.012"},
		{pgTimestamp3(1787788800000), "2026-08-27 00:00:00"},
		{string(appendPyJSON(nil, obj{{"b", 1}, {"a", []any{nil, true, "é\"\n"}}})), `{"b": 1, "a": [null, true, "é\"\n"]}`},
		{string(appendJSONB(nil, obj{{"usage", 1}, {"id", 2}, {"model", obj{{"zz", 1}, {"a", 2}}}})), `{"id": 2, "model": {"a": 2, "zz": 1}, "usage": 1}`},
		{string(appendPgCSV(nil, nil)), ""}, {string(appendPgCSV(nil, ptr(""))), `""`}, {string(appendPgCSV(nil, ptr(`{"a": 1}`))), `"{""a"": 1}"`},
		{string(appendPgCSV(nil, ptr("x y"))), "x y"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func ptr(s string) *string { return &s }
