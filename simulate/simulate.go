// Package simulate writes simulated incidents of a prefill/decode-
// disaggregated inference cluster: request logs (with realistic noise), an
// incident file, a capacity timeline, a tenant directory, and the ground
// truth of who received whose KV memory.
//
// It is the oracle the analysis is tested against, so it replays the decode
// pools exactly as DESIGN.md's "Contamination model" says (pool.go), on the
// clean rows, before any noise is applied; and it is the data behind
// `leakmap demo`. Everything it writes is a pure function of its Config:
// the same seed gives byte-identical files.
package simulate

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
)

// Config describes one simulated incident.
type Config struct {
	Seed      int64
	Requests  int    // total requests logged (all models, all tenants), specials included
	Tenants   int    // tenants of the service
	Allocator string // sorted | fifo | lifo (written into the incident file, used by the truth)
	PageSize  int64  // decode pool page size in tokens (1: no rounding)
	Noise     bool   // duplicates, truncated lines, missing decode instance, mixed offsets, clock skew

	// DirectoryGaps leaves one affected tenant out of tenants.csv and lists
	// another with no email address (the notify tests need both; either is
	// "cannot notify", counted). An address that does not parse is no gap
	// but a bad directory, refused at load, so it is never written.
	DirectoryGaps bool
	// CSVPart writes the first day's log part as CSV instead of JSON Lines.
	CSVPart bool

	PrefillInstances int     // prefill instances of the in-scope model (pf-0..)
	DecodeInstances  int     // decode instances shared by every model (dc-0..)
	TextShare        float64 // share of tenants that log prompt and response text
	// Templates: a third of the tenants start every prompt with one of three
	// shared templates, and their responses echo it (text.go).
	Templates bool
	HugeShare float64 // share of in-scope requests with a prompt of 600k..1.06M tokens

	MaxContextTokens  int64 // the in-scope model's maximum context
	PrefillPoolTokens int64 // prefill pool before the fix (the default threshold)
	FixedPrefillPool  int64 // prefill pool from FixAt on
	MidPrefillPool    int64 // pf-1's pool from CapacityChangeAt on
	DecodePoolTokens  int64 // default decode pool

	LogStart         time.Time // first regular request (a day of out-of-scope traffic before launch)
	WindowStart      time.Time // launch of the in-scope model; the exposure window starts
	CapacityChangeAt time.Time // pf-1's prefill pool grows to MidPrefillPool
	DecodeGrowAt     time.Time // dc-2's decode pool grows (never-written slots appended)
	DiscoveredAt     time.Time
	AwareAt          time.Time
	WindowEnd        time.Time // the model is withdrawn: requests get 503 until FixAt
	FixAt            time.Time // restored with FixedPrefillPool; dc-0's decode pool grows
	LogEnd           time.Time // last regular request before this
	AsOf             time.Time

	// Noise rates, per clean row (only when Noise).
	DupRate           float64 // an exact duplicate line (same part or the next one)
	OffsetDupRate     float64 // the same row written again with another UTC offset
	TruncRate         float64 // a damaged (truncated) extra copy of the line
	MissingDecodeRate float64 // the row is logged without its decode instance
	// DropTriggerDecode logs the window's last trigger without its decode
	// instance (an edge case: its sources cannot be replayed).
	DropTriggerDecode bool

	// CanonicalOnly leaves out the real layouts (the proxy's and engines'
	// request logs under real/, incident-real.yaml, truth/real_*.csv): they
	// are three quarters of the cost, and the scale benchmarks load the
	// canonical logs alone. Everything else is written as without it, but
	// for the rids of cut inputs in the engines' start-up logs.
	CanonicalOnly bool
}

// DefaultConfig is the tests' incident: a few thousand requests, generated
// in well under a second.
func DefaultConfig() Config {
	ts := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return Config{
		Seed: 1, Requests: 6000, Tenants: 60, Allocator: "sorted", PageSize: 1, Noise: true,
		DirectoryGaps: true, CSVPart: true,
		PrefillInstances: 4, DecodeInstances: 4, TextShare: 0.45, HugeShare: 0.025, Templates: true,
		MaxContextTokens: 1048576, PrefillPoolTokens: 681280, FixedPrefillPool: 2040000,
		MidPrefillPool: 720896, DecodePoolTokens: 3200000,
		LogStart:         ts("2026-08-26T00:00:00Z"),
		WindowStart:      ts("2026-08-27T00:00:00Z"),
		CapacityChangeAt: ts("2026-09-03T12:00:00Z"),
		DecodeGrowAt:     ts("2026-09-05T00:00:00Z"),
		DiscoveredAt:     ts("2026-09-08T23:11:00Z"),
		AwareAt:          ts("2026-09-09T10:00:00Z"),
		WindowEnd:        ts("2026-09-09T14:00:00Z"),
		FixAt:            ts("2026-09-09T19:40:00Z"),
		LogEnd:           ts("2026-09-10T06:00:00Z"),
		AsOf:             ts("2026-09-10T09:00:00Z"),
		DupRate:          0.01, OffsetDupRate: 0.005, TruncRate: 0.003, MissingDecodeRate: 0.0005, DropTriggerDecode: true,
	}
}

// DemoConfig is what `leakmap demo` uses: DefaultConfig with as many
// over-long prompts as give the seed's order of affected responses (about
// 155 over the two weeks).
func DemoConfig() Config {
	c := DefaultConfig()
	c.HugeShare = 0.075
	return c
}

// Summary says what Generate wrote.
type Summary struct {
	Requests       int // clean rows (distinct requests) logged
	Triggers       int // affected requests in the truth
	TruthExposures int // rows of truth/exposures.csv
	Copies         int // of which leaked_text=true: a copy of the source's words was planted
	ConfirmedTruth int // of those, the copies that prove the leak (text_pairs.csv proven=true: the confirmed tier's truth)
	CrossTenant    int // exposures whose source tenant is not the recipient
	UnknownSlots   int64
	Recipients     int // distinct recipient tenants
	Sources        int // distinct cross-tenant source tenants
	ReplayWarnings int // allocations larger than the free slots

	// EdgeCases maps each planted edge case (window-start, at-threshold,
	// at-capacity-change, equal-time-trigger, ...) to its request id; the
	// same list is in truth/edge_cases.csv.
	EdgeCases map[string]string

	Lines         int // lines (and CSV rows) written to logs/, noise included
	Duplicates    int // exact or re-offset duplicate copies
	Truncated     int // damaged extra copies
	MissingDecode int // rows logged without their decode instance

	// With DirectoryGaps: the affected tenant left out of tenants.csv and the
	// one listed with no email address ("" when there was no candidate).
	MissingTenant string
	NoEmailTenant string

	// Real is what the real layouts (real/, incident-real.yaml) hold.
	Real RealSummary

	Incident string   // path of incident.yaml
	Tenants  string   // path of tenants.csv
	Logs     string   // path of the logs folder
	Files    []string // every file written, relative to dir, sorted
}

// Instance names are host names, as the engines' log files carry them
// ({host}_{rank}.log): the in-scope model's cluster (glm-p*, glm-d*), the
// small model's (air-p*, air-d*) and the long-context model's, whose hosts
// have dotted FQDN names. Each model has hosts of its own, as a serving
// engine serves one model.
func prefillName(i int) string      { return fmt.Sprintf("glm-p%d", i) }
func longName(i int) string         { return fmt.Sprintf("kimi-p%d.gpu.nimbus.internal", i) }
func smallPrefillName(i int) string { return fmt.Sprintf("air-p%d", i) }
func decodeName(i int) string       { return fmt.Sprintf("glm-d%d", i) }

// The long-context model has decode instances of its own (pool indexes from
// Config.DecodeInstances on), with a larger pool; the small model has its own
// after them. Their tenants never meet the in-scope model's pools.
const (
	longDecodes    = 2
	longDecodePool = 6400000
	smallPrefills  = 2
	smallDecodes   = 2
)

func longDecodeName(i int) string  { return fmt.Sprintf("kimi-d%d.gpu.nimbus.internal", i) }
func smallDecodeName(i int) string { return fmt.Sprintf("air-d%d", i) }

// decodeIndex is the pool index of the long model's i-th and the small
// model's i-th decode instance.
func (c *Config) longDecode(i int) int  { return c.DecodeInstances + i }
func (c *Config) smallDecode(i int) int { return c.DecodeInstances + longDecodes + i }

// decodeInstName names the decode pool with index i.
func (c *Config) decodeInstName(i int) string {
	switch {
	case i >= c.DecodeInstances+longDecodes:
		return smallDecodeName(i - c.DecodeInstances - longDecodes)
	case i >= c.DecodeInstances:
		return longDecodeName(i - c.DecodeInstances)
	}
	return decodeName(i)
}

// The models: one in scope, a small out-of-scope model on the same prefill
// instances, and an out-of-scope long-context model with huge prompts on
// prefill instances of its own (whose pool is large enough).
const (
	modelInScope = iota
	modelSmall
	modelLong
)

var modelNames = []string{"glm-5.3", "glm-4.6-air", "kimi-k3-long"}

const longPrefillPool = 2097152

// Validate checks a Config; errors are usage errors naming the field.
func (c *Config) Validate() error {
	var p []string
	if c.Requests < 100 {
		p = append(p, fmt.Sprintf("requests: %d is too few (at least 100)", c.Requests))
	}
	if c.Tenants < 8 {
		p = append(p, fmt.Sprintf("tenants: %d is too few (at least 8)", c.Tenants))
	}
	switch c.Allocator {
	case "sorted", "fifo", "lifo":
	default:
		p = append(p, fmt.Sprintf("allocator: unknown policy %q (want sorted, fifo or lifo)", c.Allocator))
	}
	if c.PageSize < 1 {
		p = append(p, fmt.Sprintf("page-size: must be at least 1, got %d", c.PageSize))
	}
	if c.PrefillInstances < 3 {
		p = append(p, "prefill instances: at least 3")
	}
	if c.DecodeInstances < 3 {
		p = append(p, "decode instances: at least 3")
	}
	if c.DecodePoolTokens < 2*c.MaxContextTokens {
		p = append(p, "decode pool: must hold two maximum contexts")
	}
	if c.DecodePoolTokens > maxPool/3*2 { // dc-0 grows by half at the fix
		p = append(p, fmt.Sprintf("decode pool: at most %d tokens", int64(maxPool/3*2)))
	}
	order := []time.Time{c.LogStart, c.WindowStart, c.CapacityChangeAt, c.DecodeGrowAt, c.WindowEnd, c.FixAt, c.LogEnd}
	for i := 1; i < len(order); i++ {
		if !order[i].After(order[i-1]) {
			p = append(p, "times: want LogStart < WindowStart < CapacityChangeAt < DecodeGrowAt < WindowEnd < FixAt < LogEnd")
			break
		}
	}
	if len(p) > 0 {
		return errs.Usage("simulate: %s", strings.Join(p, "; "))
	}
	return nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// Generate writes a complete simulated case into dir (created if needed)
// and returns a summary.
func Generate(ctx context.Context, logger *slog.Logger, dir string, cfg Config) (*Summary, error) {
	return generate(ctx, logger, dir, cfg, nil)
}

// generate is Generate with a hook that sees every clean row as logged
// (the tests' view of what noise must preserve).
func generate(ctx context.Context, logger *slog.Logger, dir string, cfg Config, hook func(*logged)) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{dir, filepath.Join(dir, "logs"), filepath.Join(dir, "truth")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
	}
	// Parts of an earlier simulation in dir would mix with this one's.
	old, _ := filepath.Glob(filepath.Join(dir, "logs", "requests-*"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
	}
	g, err := newGenerator(dir, cfg, logger)
	if err != nil {
		return nil, err
	}
	g.out.hook = hook
	defer g.closeAll()
	if err := g.run(ctx); err != nil {
		return nil, err
	}
	if err := g.finish(); err != nil {
		return nil, err
	}
	s := g.sum
	s.Incident = filepath.Join(dir, "incident.yaml")
	s.Tenants = filepath.Join(dir, "tenants.csv")
	s.Logs = filepath.Join(dir, "logs")
	if !cfg.CanonicalOnly {
		s.Real.Dir = filepath.Join(dir, "real")
		s.Real.Incident = filepath.Join(dir, "incident-real.yaml")
	}
	sort.Strings(s.Files)
	logger.Debug("simulated incident written", "dir", dir, "requests", s.Requests, "triggers", s.Triggers,
		"exposures", s.TruthExposures, "confirmed", s.ConfirmedTruth, "replay_warnings", s.ReplayWarnings)
	return &s, nil
}

// tenant is one customer account.
type tenant struct {
	id, name   string
	emails     []string
	lang       string
	juris      string
	kind       int // tenantShared, tenantLongOnly or tenantDormant
	logsText   bool
	template   int8 // shared template its prompts start with, -1: none
	nullStyle  bool // absent text is written as null (else the key is left out)
	recipient  bool // filled by the replay
	crossSrc   bool
	lastTrigTs int64
}

// Tenant kinds: most share the decode pools of the in-scope model; some
// only use the long-context model (never affected); two send nothing (in
// the directory, but no notice is due).
const (
	tenantShared = iota
	tenantLongOnly
	tenantDormant
)

// row is one clean request row, as logged before noise.
type row struct {
	n          uint64 // generation counter (ids, text seeds)
	id         string
	ts, end    int64 // Unix ms; end > ts always
	tenant     int32
	model      int
	prompt     int64
	completion int64
	status     int // 0: not logged
	prefill    string
	decode     int    // pool index, -1: none
	decodeInst string // its name ("" when none)
	prefillRid string // the prefill server's rid in the real layouts ("" when none)
	served     bool
	trigger    bool
	threshold  int64
	special    string // which edge case this row is, for tests ("" for regular rows)
	// forceNoDecode makes the noise drop this row's decode instance
	// (Config.DropTriggerDecode); noDecode says it was dropped.
	forceNoDecode, noDecode bool

	own     *owner
	held    hold
	sources map[*owner]int64
	unknown int64
}

func (r *row) replayed() bool { return r.served && r.decode >= 0 }

func served(status int) bool { return status == 0 || (status >= 200 && status < 300) }

type generator struct {
	cfg    Config
	dir    string
	logger *slog.Logger
	rng    *rand.Rand // the clean data
	noise  *rand.Rand // noise decisions only: clean rows do not depend on Noise
	key    uint64

	tenants  []tenant
	tenantCW []float64 // cumulative weights
	counter  uint64

	rp   *replayer
	out  *logWriter
	tr   *truthWriter
	real *realWriter
	sum  Summary
	pf   proofs // what the truth's proven column is computed from (proven.go)

	boot        *startupLogs   // the engines' start-up text logs (startup.go)
	changeTimes map[int64]bool // capacity change instants that no regular event may share
	tl          []capacityChange
	edges       []*row // the edge-case rows, in (ts, request_id) order
}

func newGenerator(dir string, cfg Config, logger *slog.Logger) (*generator, error) {
	g := &generator{cfg: cfg, dir: dir, logger: logger,
		rng:         rand.New(rand.NewPCG(uint64(cfg.Seed), 0x636c65616e)),
		noise:       rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6e6f697365)),
		key:         mix(uint64(cfg.Seed) ^ 0x6964),
		changeTimes: map[int64]bool{},
	}
	g.sum.EdgeCases = map[string]string{}
	g.makeTenants()
	g.tl = g.timeline()
	g.rp = &replayer{pageSize: cfg.PageSize, onAlloc: g.onAlloc}
	byName := map[string]int{}
	for i := 0; i < cfg.DecodeInstances+longDecodes+smallDecodes; i++ {
		byName[cfg.decodeInstName(i)] = i
		p, err := newPool(cfg.Allocator, cfg.DecodePoolTokens)
		if err != nil {
			return nil, err
		}
		g.rp.pools = append(g.rp.pools, p)
	}
	for _, ch := range g.timeline() {
		g.changeTimes[ms(ch.from)] = true
		if ch.role == "decode" {
			g.rp.push(event{t: ms(ch.from), kind: evGrow, id: ch.inst, inst: byName[ch.inst], size: ch.pool})
		}
	}
	var err error
	if g.out, err = newLogWriter(filepath.Join(dir, "logs"), cfg); err != nil {
		return nil, err
	}
	if g.tr, err = newTruthWriter(filepath.Join(dir, "truth")); err != nil {
		return nil, err
	}
	if cfg.CanonicalOnly {
		return g, nil
	}
	if g.real, err = newRealWriter(dir, cfg, g.key); err != nil {
		g.tr.abort()
		return nil, err
	}
	return g, nil
}

func (g *generator) closeAll() {
	g.out.abort()
	g.tr.abort()
	if g.real != nil {
		g.real.abort()
	}
}

// capacityChange is one row of capacity.csv.
type capacityChange struct {
	inst, role string
	pool       int64
	from       time.Time
}

// timeline is the capacity timeline: the long-context model's prefill
// instances have their own pool; pf-1 grows mid-window; the fix raises every
// in-scope prefill pool; two decode pools grow (one mid-window, one at the fix).
func (g *generator) timeline() []capacityChange {
	c := g.cfg
	var tl []capacityChange
	for i := 0; i < 2; i++ {
		tl = append(tl, capacityChange{longName(i), "prefill", longPrefillPool, c.LogStart})
	}
	for i := 0; i < longDecodes; i++ {
		tl = append(tl, capacityChange{longDecodeName(i), "decode", longDecodePool, c.LogStart})
	}
	tl = append(tl, capacityChange{prefillName(1), "prefill", c.MidPrefillPool, c.CapacityChangeAt})
	tl = append(tl, capacityChange{decodeName(2), "decode", c.DecodePoolTokens + c.DecodePoolTokens/4, c.DecodeGrowAt})
	for i := 0; i < c.PrefillInstances; i++ {
		tl = append(tl, capacityChange{prefillName(i), "prefill", c.FixedPrefillPool, c.FixAt})
	}
	tl = append(tl, capacityChange{decodeName(0), "decode", c.DecodePoolTokens + c.DecodePoolTokens/2, c.FixAt})
	return tl
}

// prefillPoolAt is the prefill pool in force for inst at t (Unix ms).
func (g *generator) prefillPoolAt(inst string, t int64) int64 {
	pool := g.cfg.PrefillPoolTokens
	for _, ch := range g.tl {
		if ch.inst == inst && ch.role == "prefill" && ms(ch.from) <= t {
			pool = ch.pool
		}
	}
	return pool
}

var (
	nameA   = []string{"Acme", "Borealis", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Helios", "Iris", "Juniper", "Kestrel", "Lumen", "Meridian", "Nova", "Orchid", "Pioneer", "Quartz", "Riviera", "Sierra", "Tundra", "Umber", "Vega", "Willow", "Zenith"}
	nameB   = []string{"Analytics", "Legal", "Health", "Bank", "Logistics", "Robotics", "Media", "Insurance", "Energy", "Retail", "Labs", "Travel"}
	nameBFr = []string{"Conseil", "Santé", "Assurances", "Énergie", "Données", "Études", "Mutuelle", "Édition"}
	jurisEn = []string{"IE", "DE", "NL", "US", "GB", "ES", "IT", "SE"}
	jurisFr = []string{"FR", "FR", "FR", "BE", "CA", "LU"}
)

func (g *generator) makeTenants() {
	r := g.rng
	n := g.cfg.Tenants
	seen := map[string]bool{}
	var total float64
	for i := 0; i < n; i++ {
		t := tenant{id: fmt.Sprintf("tenant-%04d", i+1)}
		if r.Float64() < 0.35 {
			t.lang = "fr"
			t.juris = jurisFr[r.IntN(len(jurisFr))]
			t.name = nameA[r.IntN(len(nameA))] + " " + nameBFr[r.IntN(len(nameBFr))]
			if r.IntN(2) == 0 {
				t.name += " SAS"
			}
		} else {
			t.lang = "en"
			t.juris = jurisEn[r.IntN(len(jurisEn))]
			t.name = nameA[r.IntN(len(nameA))] + " " + nameB[r.IntN(len(nameB))]
		}
		if seen[t.name] {
			t.name = fmt.Sprintf("%s %d", t.name, i+1)
		}
		seen[t.name] = true
		slug := fmt.Sprintf("%s-%04d", strings.ToLower(strings.Fields(t.name)[0]), i+1)
		t.emails = []string{"security@" + slug + ".example"}
		if r.Float64() < 0.3 {
			t.emails = append(t.emails, "dpo@"+slug+".example")
		}
		t.logsText = r.Float64() < g.cfg.TextShare
		t.template = templateOf(g.cfg.Seed, i, g.cfg.Templates)
		t.nullStyle = r.IntN(2) == 0
		_ = r.IntN(3) // was the client's id style: keeps the draws, and so the data, of earlier versions
		switch {
		case i >= n-2:
			t.kind = tenantDormant
		case i%10 == 7:
			t.kind = tenantLongOnly
		}
		g.tenants = append(g.tenants, t)
		// Zipf-like: a few tenants send most of the traffic.
		if t.kind != tenantDormant {
			total += 1 / math.Pow(float64(i+1), 0.8)
		}
		g.tenantCW = append(g.tenantCW, total)
	}
	// Both text-logging and silent tenants must exist for the edge cases.
	g.tenants[0].logsText, g.tenants[1].logsText = true, false
}

func (g *generator) pickTenant() int32 {
	x := g.rng.Float64() * g.tenantCW[len(g.tenantCW)-1]
	return int32(sort.SearchFloat64s(g.tenantCW, x))
}

// pickTenantWhere picks a tenant uniformly among those with logsText == text.
func (g *generator) pickTenantWhere(text bool) int32 {
	for {
		i := int32(g.rng.IntN(len(g.tenants)))
		if g.tenants[i].logsText == text && g.tenants[i].kind == tenantShared {
			return i
		}
	}
}

// newID numbers a new request (ids, text seeds).
func (g *generator) newID() uint64 {
	g.counter++
	return g.counter
}

// requestID is a row's id as the gateway logs it (canonical ids equal the
// gateway's): a served call carries the upstream response's id, which for an
// SGLang cluster is the decode server's rid (chatcmpl- and a uuid4 in hex);
// a call that failed has none, and the proxy logs its own call id (a uuid4).
// Both derive from the row's number, so ids never collide.
func (g *generator) requestID(r *row) string {
	u := uuidHex(mix(r.n+g.key), mix(r.n^g.key^0x75756964))
	if served(r.status) {
		return "chatcmpl-" + u
	}
	return u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
}

// uuidHex is 32 hex digits of a version-4 uuid made of hi and lo.
func uuidHex(hi, lo uint64) string {
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // variant 10
	return fmt.Sprintf("%016x%016x", hi, lo)
}

func (g *generator) lognormal(median, sigma float64, lo, hi int64) int64 {
	v := int64(median * math.Exp(sigma*g.rng.NormFloat64()))
	return max(lo, min(hi, v))
}

// finishRow fills what follows from a row's fields: served, trigger,
// duration, owner.
func (g *generator) finishRow(r *row) {
	c := g.cfg
	r.served = served(r.status)
	r.id = g.requestID(r)
	if !r.served && r.status != 500 {
		r.prefill, r.decode, r.completion = "", -1, 0
	}
	if r.status == 500 {
		r.completion = 0
	}
	if r.decode >= 0 {
		r.decodeInst = c.decodeInstName(r.decode)
	}
	if r.model == modelInScope && r.served && r.prefill != "" {
		r.threshold = g.prefillPoolAt(r.prefill, r.ts)
		r.trigger = r.ts >= ms(c.WindowStart) && r.ts < ms(c.WindowEnd) && r.prompt > r.threshold
	}
	if r.trigger {
		r.completion = 20 + g.rng.Int64N(600) // generated from stale KV, then stopped
	}
	var durMs int64
	switch {
	case !r.served && r.status != 500:
		durMs = 2 + g.rng.Int64N(40)
	default:
		eff := r.prompt
		if r.trigger {
			eff = 1 // the engine silently replaced the prompt by one token
		}
		d := 150 + eff*1000/150000 + r.completion*1000/50
		durMs = max(1, int64(float64(d)*(0.7+0.6*g.rng.Float64())))
	}
	r.end = r.ts + durMs
	if c.Noise && r.special == "" && r.decode >= 0 {
		// Clock skew: each decode machine's clock is a little off. It is
		// part of the times as logged (and replayed), and never puts a
		// request's end before its start.
		skew := []int64{-35, 20, 55, -10, 5, -25, 40, 15}[r.decode%8]
		r.end = max(r.ts+1, r.end+skew)
	}
	for r.special == "" && g.changeTimes[r.end] {
		r.end++ // no release at the very instant a pool changes
	}
	r.own = &owner{id: r.id, tenant: r.tenant, hasText: g.tenants[r.tenant].logsText, textSeed: mix(r.n ^ g.key ^ 0x7072),
		template: g.tenants[r.tenant].template, model: int8(r.model)}
}

// regular generates an ordinary request at ts.
func (g *generator) regular(ts int64) *row {
	c := g.cfg
	r := &row{ts: ts, tenant: g.pickTenant(), decode: -1}
	if g.changeTimes[r.ts] {
		r.ts++
	}
	r.n = g.newID()
	x := g.rng.Float64()
	switch {
	case x < 0.55:
		r.model = modelInScope
	case x < 0.85:
		r.model = modelSmall
	default:
		r.model = modelLong
	}
	if g.tenants[r.tenant].kind == tenantLongOnly {
		r.model = modelLong
	}
	if r.model == modelInScope && r.ts < ms(c.WindowStart) {
		r.model = modelSmall // not launched yet
	}
	maxCtx := c.MaxContextTokens
	switch r.model {
	case modelInScope:
		if g.rng.Float64() < c.HugeShare {
			r.prompt = 600000 + g.rng.Int64N(460000) // some above the max context: 400
		}
	case modelSmall:
		maxCtx = 131072
	case modelLong:
		if g.rng.Float64() < 0.08 {
			r.prompt = 600000 + g.rng.Int64N(440000)
		}
	}
	if r.prompt == 0 {
		if g.rng.Float64() < 0.08 {
			r.prompt = 40000 + g.rng.Int64N(min(maxCtx, 400000)-40000)
		} else {
			r.prompt = g.lognormal(1500, 1.3, 16, 120000)
		}
	}
	r.completion = g.lognormal(250, 1.0, 1, 4096)
	switch {
	case g.rng.Float64() < 0.02:
		r.status = 429
	case r.model == modelInScope && r.ts >= ms(c.WindowEnd) && r.ts < ms(c.FixAt):
		r.status = 503 // withdrawn
	case r.prompt > maxCtx:
		r.status = 400
	case g.rng.Float64() < 0.003:
		r.status = 500 // failed after scheduling: instances logged, never served
	case g.rng.Float64() < 0.01:
		r.status = 0 // not logged: served, in the conservative reading
	default:
		r.status = 200
	}
	switch r.model {
	case modelLong:
		r.prefill = longName(g.rng.IntN(2))
	case modelSmall:
		r.prefill = smallPrefillName(g.rng.IntN(c.PrefillInstances) % smallPrefills)
	default:
		r.prefill = prefillName(g.rng.IntN(c.PrefillInstances))
	}
	r.decode = g.rng.IntN(c.DecodeInstances)
	switch r.model {
	case modelLong:
		r.decode = c.longDecode(g.rng.IntN(longDecodes))
	case modelSmall:
		r.decode = c.smallDecode(r.decode % smallDecodes)
	}
	g.finishRow(r)
	return r
}

// special builds an edge-case row at a fixed time.
func (g *generator) special(name string, ts time.Time, tenant int32, model int, prompt int64, status int, prefill string, decode int) *row {
	r := &row{ts: ms(ts), tenant: tenant, model: model, prompt: prompt, status: status,
		prefill: prefill, decode: decode, special: name, completion: 40 + g.rng.Int64N(300)}
	r.n = g.newID()
	g.finishRow(r)
	return r
}

// specials are the edge cases every test needs, at fixed times.
func (g *generator) specials() []*row {
	c := g.cfg
	text, silent := func() int32 { return g.pickTenantWhere(true) }, func() int32 { return g.pickTenantWhere(false) }
	any := func() int32 { return g.pickTenantWhere(g.rng.IntN(2) == 0) }
	mid := c.WindowStart.Add(c.CapacityChangeAt.Sub(c.WindowStart) / 2)
	in, pt := modelInScope, c.PrefillPoolTokens
	var s []*row
	add := func(r *row) *row { s = append(s, r); return r }
	add(g.special("before-window", c.WindowStart.Add(-time.Minute), any(), in, 900000, 200, prefillName(0), 0))
	add(g.special("window-start", c.WindowStart, silent(), in, 850000, 200, prefillName(1), 1))
	// With noise: a trigger whose decode instance is unknown. It is the
	// window's last, because a missing row shifts every later allocation on
	// its pool, and a missing 900k-token trigger shifts a lot.
	r := add(g.special("window-end-last", c.WindowEnd.Add(-time.Millisecond), text(), in, 900000, 200, prefillName(2), 2))
	r.forceNoDecode = c.DropTriggerDecode
	// Served at the very instant of the withdrawal: outside the half-open window.
	add(g.special("window-end", c.WindowEnd, any(), in, 900000, 200, prefillName(2), 3))
	add(g.special("at-threshold", mid, text(), in, pt, 200, prefillName(0), 0))
	add(g.special("threshold-plus-one", mid.Add(time.Hour), text(), in, pt+1, 200, prefillName(0), 1))
	add(g.special("no-status", mid.Add(2*time.Hour), any(), in, 950000, 0, prefillName(3), 2))
	add(g.special("error-500", mid.Add(3*time.Hour), any(), in, 950000, 500, prefillName(3), 3))
	add(g.special("rate-limited", mid.Add(4*time.Hour), any(), in, 950000, 429, "", -1))
	add(g.special("out-of-scope-huge", mid.Add(5*time.Hour), any(), modelSmall, 950000, 200, smallPrefillName(0), c.smallDecode(0)))
	add(g.special("out-of-scope-long", mid.Add(6*time.Hour), any(), modelLong, 1000000, 200, longName(0), c.longDecode(1)))
	add(g.special("before-capacity-change", c.CapacityChangeAt.Add(-time.Hour), any(), in, 700000, 200, prefillName(1), 3))
	add(g.special("at-capacity-change", c.CapacityChangeAt, any(), in, 700000, 200, prefillName(1), 0))
	add(g.special("at-new-threshold", c.CapacityChangeAt.Add(2*time.Hour), any(), in, c.MidPrefillPool, 200, prefillName(1), 1))
	add(g.special("above-new-threshold", c.CapacityChangeAt.Add(3*time.Hour), silent(), in, c.MidPrefillPool+1, 200, prefillName(1), 2))
	add(g.special("outage", c.WindowEnd.Add(time.Hour), any(), in, 900000, 503, "", -1))
	add(g.special("after-fix-too-long", c.FixAt.Add(2*time.Hour), any(), in, 1200000, 400, "", -1))
	add(g.special("after-fix-huge", c.FixAt.Add(3*time.Hour), any(), in, 900000, 200, prefillName(0), 0))

	// Equal times on glm-d1 at G: P ends exactly when trigger T and request
	// Q start. Releases go before allocations; T's id sorts before Q's in
	// byte order, so T allocates first.
	G := c.CapacityChangeAt.Add(-20 * time.Hour)
	p := g.special("equal-time-release", G.Add(-10*time.Second), text(), in, 5000, 200, prefillName(2), 1)
	p.end = ms(G)
	add(p)
	t := g.special("equal-time-trigger", G, text(), in, 820000, 200, prefillName(3), 1)
	q := g.special("equal-time-alloc", G, text(), in, 3000, 200, prefillName(2), 1)
	if t.id > q.id {
		t.id, q.id = q.id, t.id
		t.own.id, q.own.id = t.id, q.id
	}
	add(t)
	add(q)
	sort.SliceStable(s, func(i, j int) bool { return s[i].ts < s[j].ts })
	return s
}

// run generates every row in ts order and feeds the replay, which writes
// each row (and the truth) as its allocation is applied.
func (g *generator) run(ctx context.Context) error {
	c := g.cfg
	sp := g.specials()
	nReg := c.Requests - len(sp)
	start, span := ms(c.LogStart), float64(ms(c.LogEnd)-ms(c.LogStart))
	cell := span / float64(nReg)
	emit := func(r *row) error {
		if err := g.rp.advance(r.ts); err != nil {
			return err
		}
		g.rp.add(r)
		return nil
	}
	for i := 0; i < nReg; i++ {
		if i%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if i > 0 && i%(1<<20) == 0 {
				g.logger.Debug("simulating", "requests", i)
			}
		}
		ts := start + int64((float64(i)+g.rng.Float64())*cell)
		for len(sp) > 0 && sp[0].ts <= ts {
			if err := emit(sp[0]); err != nil {
				return err
			}
			sp = sp[1:]
		}
		if err := emit(g.regular(ts)); err != nil {
			return err
		}
	}
	for _, r := range sp {
		if err := emit(r); err != nil {
			return err
		}
	}
	if err := g.rp.drain(); err != nil {
		return err
	}
	g.sum.ReplayWarnings = g.rp.warnings
	return nil
}

// onAlloc is called once per row, in (ts, request_id) order, once its
// slots are known: it writes the truth for triggers, then the log lines.
func (g *generator) onAlloc(r *row) error {
	g.sum.Requests++
	if r.special != "" {
		g.sum.EdgeCases[r.special] = r.id
		g.edges = append(g.edges, r)
	}
	// The noise decides first whether the log loses this row's decode
	// instance, so that the truth can say which pairs the log can place.
	if g.cfg.Noise && r.decode >= 0 && (r.forceNoDecode || g.noise.Float64() < g.cfg.MissingDecodeRate) {
		r.noDecode = true
		g.sum.MissingDecode++
	}
	r.own.noDecode = r.noDecode
	resp := ""
	t := &g.tenants[r.tenant]
	if r.trigger {
		var err error
		if resp, err = g.trigger(r); err != nil {
			return err
		}
	} else if t.logsText && r.served {
		resp = responseText(r.own)
	}
	prompt := ""
	if t.logsText {
		prompt = promptText(r.own)
		g.pf.prompts = append(g.pf.prompts, promptOf(r.own))
	}
	r.sources = nil // the truth is written; keep no owners alive through it
	if g.real != nil {
		if err := g.real.add(g, r, prompt, resp); err != nil {
			return err
		}
	}
	g.observeStartup(r) // after the real layouts: it names the prefill record's rid
	return g.out.write(g, r, prompt, resp)
}

type src struct {
	own   *owner
	slots int64
}

// trigger writes a trigger's truth rows and returns its response text
// (empty when its tenant logs no text): stale fragments of up to three
// sources' logged prompts, among random words.
func (g *generator) trigger(r *row) (string, error) {
	t := &g.tenants[r.tenant]
	t.recipient = true
	t.lastTrigTs = r.ts
	srcs := make([]src, 0, len(r.sources))
	for o, n := range r.sources {
		srcs = append(srcs, src{o, n})
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].own.id < srcs[j].own.id })

	rng := rand.New(rand.NewPCG(r.own.textSeed, 0x74726967))
	leaked := map[*owner]bool{}
	resp := ""
	if t.logsText {
		// The response is generated from stale KV: inject from the sources
		// holding the most stale slots, among those whose prompt is logged.
		cand := make([]src, 0, len(srcs))
		for _, s := range srcs {
			if s.own.hasText {
				cand = append(cand, s)
			}
		}
		sort.SliceStable(cand, func(i, j int) bool { return cand[i].slots > cand[j].slots })
		k := min(len(cand), 1+rng.IntN(3))
		var from []*owner
		for _, s := range cand[:k] {
			from = append(from, s.own)
			leaked[s.own] = true
		}
		resp = leakedResponse(rng, r.own, from)
	}

	g.sum.Triggers++
	g.sum.UnknownSlots += r.unknown
	if err := g.tr.trigger(r, g.tenants[r.tenant].id); err != nil {
		return "", err
	}
	for _, s := range srcs {
		self := s.own.tenant == r.tenant
		if !self {
			g.sum.CrossTenant++
			g.tenants[s.own.tenant].crossSrc = true
		}
		if leaked[s.own] {
			g.sum.Copies++
			g.pf.copies = append(g.pf.copies, &plantedCopy{respID: r.id, srcID: s.own.id, respTenant: t.id,
				srcTenant: g.tenants[s.own.tenant].id, respModel: int8(r.model), srcModel: s.own.model,
				ts: r.ts, resp: resp, own: promptOf(r.own), src: promptOf(s.own)})
		}
		g.sum.TruthExposures++
		if err := g.tr.exposure(s.own.id, r.id, g.tenants[s.own.tenant].id, t.id, s.slots, leaked[s.own], self,
			!r.noDecode, !s.own.noDecode); err != nil {
			return "", err
		}
	}
	return resp, nil
}

// finish closes the logs and truth and writes incident.yaml, capacity.csv
// and tenants.csv.
func (g *generator) finish() error {
	files, lines, err := g.out.close()
	if err != nil {
		return err
	}
	g.sum.Lines = lines
	g.sum.Files = append(g.sum.Files, files...)
	// Which copies prove a leak needs every prompt of the case.
	g.pf.judge(incident.DefaultEvidence, promptWords)
	for _, c := range g.pf.copies {
		if c.proven {
			g.sum.ConfirmedTruth++
		}
		if err := g.tr.textPair(c); err != nil {
			return err
		}
	}
	g.pf = proofs{}
	tf, err := g.tr.close()
	if err != nil {
		return err
	}
	g.sum.Files = append(g.sum.Files, tf...)
	if g.real != nil {
		rf, err := g.real.close()
		if err != nil {
			return err
		}
		g.sum.Files = append(g.sum.Files, rf...)
		g.sum.Real = g.real.sum
	}
	var b strings.Builder
	b.WriteString("name,request_id,trigger\n")
	for _, r := range g.edges {
		fmt.Fprintf(&b, "%s,%s,%t\n", r.special, r.id, r.trigger)
	}
	if err := writeFile(filepath.Join(g.dir, "truth", "edge_cases.csv"), []byte(b.String())); err != nil {
		return err
	}
	g.sum.Files = append(g.sum.Files, filepath.Join("truth", "edge_cases.csv"))
	for _, t := range g.tenants {
		if t.recipient {
			g.sum.Recipients++
		}
		if t.crossSrc {
			g.sum.Sources++
		}
	}
	if err := g.writeStartup(); err != nil {
		return err
	}
	if err := g.writeCapacity(); err != nil {
		return err
	}
	if err := g.writeIncident(); err != nil {
		return err
	}
	return g.writeTenants()
}
