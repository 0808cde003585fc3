package simulate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"github.com/leakmap/leakmap/internal/csvtest"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/incident"
)

// canon is a log row reduced to its values (times as UTC instants, null
// and absent alike), the way ingest compares rows.
type canon struct {
	ID, Tenant, Model, Prefill, Decode, Prompt, Resp string
	Ts, End                                          int64
	PromptTok, Completion                            int64
	Status                                           int
}

func canonOf(l *logged) canon {
	r := l.r
	return canon{ID: r.id, Tenant: l.tenant.id, Model: modelNames[r.model], Prefill: r.prefill, Decode: l.decode(),
		Prompt: l.prompt, Resp: l.resp, Ts: r.ts, End: r.end, PromptTok: r.prompt, Completion: r.completion, Status: r.status}
}

func parseTs(t *testing.T, s string) int64 {
	t.Helper()
	v, err := incident.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UnixMilli()
}

func canonFromMap(t *testing.T, m map[string]string) canon {
	num := func(k string) int64 {
		if m[k] == "" {
			return 0
		}
		n, err := strconv.ParseInt(m[k], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return n
	}
	return canon{ID: m["request_id"], Tenant: m["tenant_id"], Model: m["model"], Prefill: m["prefill_instance"],
		Decode: m["decode_instance"], Prompt: m["prompt_text"], Resp: m["response_text"],
		Ts: parseTs(t, m["ts"]), End: parseTs(t, m["end_ts"]), PromptTok: num("prompt_tokens"),
		Completion: num("completion_tokens"), Status: int(num("status"))}
}

// readLogs parses every part: intact rows, and how many lines were damaged.
func readLogs(t *testing.T, dir string) (rows []canon, damaged int, parts int, empty int) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "logs", "*"))
	for _, name := range names {
		parts++
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(data) == 0 {
			empty++
			continue
		}
		if strings.HasSuffix(name, ".csv.gz") {
			recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, rec := range recs[1:] {
				m := map[string]string{}
				for i, c := range recs[0] {
					m[c] = rec[i]
				}
				rows = append(rows, canonFromMap(t, m))
			}
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			var raw map[string]any
			d := json.NewDecoder(strings.NewReader(line))
			d.UseNumber()
			if err := d.Decode(&raw); err != nil {
				damaged++
				continue
			}
			m := map[string]string{}
			for k, v := range raw {
				switch v := v.(type) {
				case string:
					m[k] = v
				case json.Number:
					m[k] = v.String()
				case nil:
				default:
					t.Fatalf("%s: %s: unexpected %T", name, k, v)
				}
			}
			rows = append(rows, canonFromMap(t, m))
		}
	}
	return rows, damaged, parts, empty
}

func smallConfig(alloc string, noise bool) Config {
	c := DefaultConfig()
	c.Requests = 3000
	c.Allocator = alloc
	c.Noise = noise
	return c
}

// copies returns the runs of leakMin words of text that no shared template
// holds: what a planted copy leaves (a chance run of 12 Zipf words is
// beyond reach; templates are echoed on purpose).
func copies(text string) map[string]bool {
	words()
	inTemplate := map[string]bool{}
	for _, tw := range tmpl {
		for i := 0; i+leakMin <= len(tw); i++ {
			inTemplate[strings.Join(tw[i:i+leakMin], " ")] = true
		}
	}
	w := strings.Fields(text)
	out := map[string]bool{}
	for i := 0; i+leakMin <= len(w); i++ {
		if g := strings.Join(w[i:i+leakMin], " "); !inTemplate[g] {
			out[g] = true
		}
	}
	return out
}

// TestTruthInvariants generates a case per policy and checks the truth
// against the logged rows and DESIGN.md's definitions.
func TestTruthInvariants(t *testing.T) {
	for _, tc := range []struct {
		alloc string
		noise bool
		page  int64
	}{{"sorted", true, 1}, {"fifo", true, 1}, {"lifo", true, 1}, {"sorted", false, 1}, {"lifo", false, 16}} {
		t.Run(tc.alloc+"/noise="+strconv.FormatBool(tc.noise)+"/page="+strconv.FormatInt(tc.page, 10), func(t *testing.T) {
			dir := t.TempDir()
			cfg := smallConfig(tc.alloc, tc.noise)
			cfg.PageSize = tc.page
			clean := map[string]canon{}
			cleanDecode := map[string]string{}
			specials := map[string]string{}
			sum, err := generate(context.Background(), nil, dir, cfg, func(l *logged) {
				clean[l.r.id] = canonOf(l)
				if l.r.decode >= 0 {
					cleanDecode[l.r.id] = l.r.decodeInst
				}
				if l.r.special != "" {
					specials[l.r.special] = l.r.id
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Requests != cfg.Requests || len(clean) != cfg.Requests {
				t.Fatalf("requests: summary %d, distinct clean rows %d, want %d", sum.Requests, len(clean), cfg.Requests)
			}
			inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if inc.Contamination.Allocator != tc.alloc || inc.Contamination.PageSize != tc.page {
				t.Errorf("incident allocator %s page %d", inc.Contamination.Allocator, inc.Contamination.PageSize)
			}

			// Noise keeps one intact copy of every row; every line is a copy
			// of a clean row or a damaged extra line.
			rows, damaged, parts, empty := readLogs(t, dir)
			if len(rows)+damaged != sum.Lines {
				t.Errorf("lines: %d intact + %d damaged, summary says %d", len(rows), damaged, sum.Lines)
			}
			if damaged != sum.Truncated || (tc.noise && damaged == 0) || (!tc.noise && len(rows) != cfg.Requests) {
				t.Errorf("damaged %d, truncated %d, rows %d", damaged, sum.Truncated, len(rows))
			}
			if empty != 1 || parts < 10 {
				t.Errorf("parts %d, empty %d", parts, empty)
			}
			seen := map[string]bool{}
			byID := map[string]canon{}
			for _, r := range rows {
				c, ok := clean[r.ID]
				if !ok || c != r {
					t.Fatalf("logged row %s is no copy of a clean row:\n got %+v\nwant %+v", r.ID, r, c)
				}
				seen[r.ID] = true
				byID[r.ID] = r
			}
			if len(seen) != len(clean) {
				t.Errorf("%d clean rows have an intact copy, want %d", len(seen), len(clean))
			}

			// Triggers are exactly the rows of DESIGN.md's definition.
			truth := csvtest.Read(t, filepath.Join(dir, "truth", "affected_requests.csv"))
			trig := map[string]bool{}
			var lastTs string
			for _, m := range truth {
				trig[m["request_id"]] = true
				r := byID[m["request_id"]]
				if m["tenant_id"] != r.Tenant || parseTs(t, m["ts"]) != r.Ts {
					t.Errorf("trigger %s: tenant/ts %v differ from the log", r.ID, m)
				}
				if m["ts"] < lastTs && len(m["ts"]) == len(lastTs) {
					t.Errorf("affected_requests not sorted by ts at %s", r.ID)
				}
				lastTs = m["ts"]
			}
			want := 0
			for _, r := range clean {
				ts := time.UnixMilli(r.Ts)
				isTrig := inc.InScope(r.Model) && !ts.Before(inc.WindowStart) && ts.Before(inc.WindowEnd) &&
					served(r.Status) && r.Prefill != "" && r.PromptTok > inc.Capacity.PoolAt(r.Prefill, "prefill", ts)
				if isTrig != trig[r.ID] {
					t.Errorf("row %s: trigger by definition %t, in truth %t", r.ID, isTrig, trig[r.ID])
				}
				if isTrig {
					want++
				}
			}
			if want != sum.Triggers || want < 20 {
				t.Errorf("triggers: %d by definition, summary %d", want, sum.Triggers)
			}
			for name, wantTrig := range map[string]bool{
				"before-window": false, "window-start": true, "window-end-last": true, "window-end": false,
				"at-threshold": false, "threshold-plus-one": true, "no-status": true, "error-500": false,
				"rate-limited": false, "out-of-scope-huge": false, "out-of-scope-long": false,
				"before-capacity-change": true, "at-capacity-change": false, "at-new-threshold": false,
				"above-new-threshold": true, "outage": false, "after-fix-too-long": false, "after-fix-huge": false,
				"equal-time-trigger": true, "equal-time-alloc": false,
			} {
				id, ok := specials[name]
				if sum.EdgeCases[name] != id {
					t.Errorf("summary edge case %s = %s, want %s", name, sum.EdgeCases[name], id)
				}
				if !ok || trig[id] != wantTrig {
					t.Errorf("special %s (%s): trigger %t, want %t", name, id, trig[id], wantTrig)
				}
			}

			if last := clean[specials["window-end-last"]]; (last.Decode == "") != tc.noise {
				t.Errorf("window's last trigger logged with decode instance %q (noise %t)", last.Decode, tc.noise)
			}

			edges := csvtest.Read(t, filepath.Join(dir, "truth", "edge_cases.csv"))
			if len(edges) != len(specials) {
				t.Errorf("edge_cases.csv has %d rows, want %d", len(edges), len(specials))
			}
			for _, m := range edges {
				if specials[m["name"]] != m["request_id"] || m["trigger"] != strconv.FormatBool(trig[m["request_id"]]) {
					t.Errorf("edge_cases.csv row %v", m)
				}
			}

			// Exposures: sources were served on the trigger's decode
			// instance and had released before it started; slot counts add up.
			exps := csvtest.Read(t, filepath.Join(dir, "truth", "exposures.csv"))
			unknown := map[string]int64{}
			for _, m := range csvtest.Read(t, filepath.Join(dir, "truth", "unknown_slots.csv")) {
				unknown[m["trigger_request_id"]], _ = strconv.ParseInt(m["unknown_slots"], 10, 64)
			}
			if len(unknown) != len(truth) {
				t.Errorf("unknown_slots rows %d, triggers %d", len(unknown), len(truth))
			}
			stale := map[string]int64{}
			leaked := map[[2]string]bool{}
			nLeaked := 0
			for _, m := range exps {
				s, tr := clean[m["source_request_id"]], clean[m["trigger_request_id"]]
				if !trig[tr.ID] || !served(s.Status) || cleanDecode[s.ID] == "" || cleanDecode[s.ID] != cleanDecode[tr.ID] || s.End > tr.Ts {
					t.Errorf("exposure %s -> %s: source not a served earlier row of the same decode instance", s.ID, tr.ID)
				}
				if m["source_tenant_id"] != s.Tenant || m["recipient_tenant_id"] != tr.Tenant || m["kind"] != "stale" ||
					m["self_exposure"] != strconv.FormatBool(s.Tenant == tr.Tenant) ||
					m["trigger_decode_logged"] != strconv.FormatBool(tr.Decode != "") ||
					m["source_decode_logged"] != strconv.FormatBool(s.Decode != "") {
					t.Errorf("exposure row %v", m)
				}
				n, _ := strconv.ParseInt(m["slots"], 10, 64)
				stale[tr.ID] += n
				if m["leaked_text"] == "true" {
					leaked[[2]string{s.ID, tr.ID}] = true
					nLeaked++
					if s.Prompt == "" || tr.Resp == "" {
						t.Errorf("leaked_text %s -> %s without both texts logged", s.ID, tr.ID)
					}
				}
			}
			if len(exps) != sum.TruthExposures || nLeaked != sum.Copies || nLeaked == 0 {
				t.Errorf("exposures %d (summary %d), leaked %d (summary %d)", len(exps), sum.TruthExposures, nLeaked, sum.Copies)
			}
			proven := 0
			for _, m := range csvtest.Read(t, filepath.Join(dir, "truth", "text_pairs.csv")) {
				if !leaked[[2]string{m["source_request_id"], m["response_request_id"]}] {
					t.Errorf("text pair %v is no leaked_text exposure", m)
				}
				if m["proven"] == "true" {
					proven++
				}
				nLeaked--
			}
			if nLeaked != 0 {
				t.Errorf("text_pairs.csv misses %d leaked_text exposures", nLeaked)
			}
			if proven != sum.ConfirmedTruth || proven == 0 {
				t.Errorf("proven text pairs %d, summary %d", proven, sum.ConfirmedTruth)
			}
			nLeaked = sum.Copies
			if sum.ReplayWarnings == 0 {
				for id := range trig {
					r := clean[id]
					slots := (r.PromptTok + r.Completion + tc.page - 1) / tc.page * tc.page
					if got := stale[id] + unknown[id]; got != slots-1-r.Completion {
						t.Errorf("trigger %s: stale %d + unknown %d != %d slots - 1 - %d completion", id, stale[id], unknown[id], slots, r.Completion)
					}
				}
			}

			// Confirmed truth: a trigger's response shares a run of
			// leakMin words outside the templates with exactly the sources
			// marked leaked_text, and no other prompt.
			owners := map[string][]string{}
			for _, r := range clean {
				for sh := range copies(r.Prompt) {
					owners[sh] = append(owners[sh], r.ID)
				}
			}
			found := 0
			for id := range trig {
				match := map[string]bool{}
				for sh := range copies(clean[id].Resp) {
					for _, o := range owners[sh] {
						match[o] = true
					}
				}
				for o := range match {
					if !leaked[[2]string{o, id}] {
						t.Errorf("trigger %s response shares text with %s, not marked leaked", id, o)
					}
				}
				found += len(match)
			}
			if found != nLeaked {
				t.Errorf("shingle matches %d, leaked_text rows %d", found, nLeaked)
			}

			// Tenant directory gaps.
			dirTenants := map[string]map[string]string{}
			for _, m := range csvtest.Read(t, filepath.Join(dir, "tenants.csv")) {
				dirTenants[m["tenant_id"]] = m
			}
			recips := map[string]bool{}
			for _, m := range truth {
				recips[m["tenant_id"]] = true
			}
			if !recips[sum.MissingTenant] || dirTenants[sum.MissingTenant] != nil {
				t.Errorf("missing tenant %q: recipient %t, in directory %t", sum.MissingTenant, recips[sum.MissingTenant], dirTenants[sum.MissingTenant] != nil)
			}
			if m := dirTenants[sum.NoEmailTenant]; m == nil || m["email"] != "" {
				t.Errorf("no-email tenant %q: %v", sum.NoEmailTenant, m)
			}
			touched := map[string]bool{}
			for _, m := range exps {
				touched[m["source_tenant_id"]], touched[m["recipient_tenant_id"]] = true, true
			}
			if untouched := cfg.Tenants - len(touched); untouched < 4 {
				t.Errorf("only %d tenants are neither source nor recipient", untouched)
			}
			if len(dirTenants) != cfg.Tenants-1 {
				t.Errorf("directory has %d tenants, want %d", len(dirTenants), cfg.Tenants-1)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	cfg := smallConfig("fifo", true)
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	sa, err := Generate(context.Background(), nil, a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), nil, b, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Seed++
	if _, err := Generate(context.Background(), nil, c, cfg); err != nil {
		t.Fatal(err)
	}
	differs := false
	for _, f := range sa.Files {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
		z, _ := os.ReadFile(filepath.Join(c, f))
		if !bytes.Equal(x, z) {
			differs = true
		}
	}
	if !differs {
		t.Error("another seed wrote the same files")
	}
}

// TestCanonicalOnly: leaving the real layouts out writes the same canonical
// logs, truth, incident and directory, and none of real/ but the engines'
// start-up logs.
func TestCanonicalOnly(t *testing.T) {
	cfg := smallConfig("lifo", true)
	full, canon := t.TempDir(), t.TempDir()
	sf, err := Generate(context.Background(), nil, full, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CanonicalOnly = true
	sc, err := Generate(context.Background(), nil, canon, cfg)
	if err != nil {
		t.Fatal(err)
	}
	real := func(f string) bool {
		return strings.HasPrefix(f, "real"+string(filepath.Separator)) || f == "incident-real.yaml" ||
			strings.HasPrefix(f, filepath.Join("truth", "real_"))
	}
	var want []string
	for _, f := range sf.Files {
		if !real(f) || strings.HasPrefix(f, filepath.Join("real", "engine", "text")) {
			want = append(want, f)
		}
	}
	if !slices.Equal(sc.Files, want) {
		t.Fatalf("canonical-only files:\n%v\nwant:\n%v", sc.Files, want)
	}
	for _, f := range sc.Files {
		if real(f) {
			continue // the start-up logs name cut inputs by the real layouts' rids
		}
		x, err1 := os.ReadFile(filepath.Join(full, f))
		y, err2 := os.ReadFile(filepath.Join(canon, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs with CanonicalOnly", f)
		}
	}
	if sc.Real != (RealSummary{}) {
		t.Errorf("canonical-only real summary: %+v", sc.Real)
	}
	if _, err := os.Stat(filepath.Join(canon, "real", "gateway")); !os.IsNotExist(err) {
		t.Errorf("real/gateway written: %v", err)
	}
}

func TestIncidentFile(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig("lifo", false)
	if _, err := Generate(context.Background(), nil, dir, cfg); err != nil {
		t.Fatal(err)
	}
	inc, err := incident.Load(filepath.Join(dir, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { v, _ := incident.ParseTime(s); return v }
	tests := []struct {
		inst, role, at string
		want           int64
	}{
		{"glm-p0", "prefill", "2026-09-01T00:00:00Z", 681280},
		{"glm-p1", "prefill", "2026-09-03T11:59:59Z", 681280},
		{"glm-p1", "prefill", "2026-09-03T12:00:00Z", 720896},
		{"glm-p3", "prefill", "2026-09-09T19:40:00Z", 2040000},
		{"kimi-p0.gpu.nimbus.internal", "prefill", "2026-09-01T00:00:00Z", longPrefillPool},
		{"glm-d2", "decode", "2026-09-05T00:00:00Z", 4000000},
		{"glm-d1", "decode", "2026-09-10T00:00:00Z", 3200000},
		{"kimi-d1.gpu.nimbus.internal", "decode", "2026-08-26T00:00:00Z", longDecodePool},
	}
	for _, tt := range tests {
		if got := inc.Capacity.PoolAt(tt.inst, tt.role, at(tt.at)); got != tt.want {
			t.Errorf("PoolAt(%s, %s, %s) = %d, want %d", tt.inst, tt.role, tt.at, got, tt.want)
		}
	}
	if inc.AsOf == nil || len(inc.Models) != 1 || inc.Models[0] != "glm-5.3" || inc.Contamination.Allocator != "lifo" ||
		inc.Provider.Email == "" || inc.Notices.DeletionDeadline == nil {
		t.Errorf("incident: %+v", inc)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Allocator = "random" },
		func(c *Config) { c.Requests = 5 },
		func(c *Config) { c.PageSize = 0 },
		func(c *Config) { c.DecodePoolTokens = 1 << 32 }, // beyond 32-bit slots
	} {
		c := DefaultConfig()
		mod(&c)
		if _, err := Generate(context.Background(), nil, t.TempDir(), c); err == nil {
			t.Errorf("config %+v: no error", c)
		}
	}
}

// BenchmarkGenerate reports the generation rate (requests per second) of a
// noisy case of LEAKMAP_BENCH_REQUESTS (default 100,000) requests and
// LEAKMAP_BENCH_TENANTS tenants (default the tests' 60; the benchmark cases
// use 2,000), the real layouts left out when LEAKMAP_BENCH_CANONICAL_ONLY
// is set; `leakmap simulate --requests 10000000` is the large run.
func BenchmarkGenerate(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Requests = 100000
	cfg.CanonicalOnly = os.Getenv("LEAKMAP_BENCH_CANONICAL_ONLY") != ""
	for env, p := range map[string]*int{"LEAKMAP_BENCH_REQUESTS": &cfg.Requests, "LEAKMAP_BENCH_TENANTS": &cfg.Tenants} {
		if s := os.Getenv(env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				b.Fatalf("%s: %v", env, err)
			}
			*p = n
		}
	}
	for i := 0; i < b.N; i++ {
		if _, err := Generate(context.Background(), nil, b.TempDir(), cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cfg.Requests*b.N)/b.Elapsed().Seconds(), "requests/s")
}
