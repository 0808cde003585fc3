// Package incident reads and validates the incident file (YAML) that
// describes a case, and its capacity timeline.
package incident

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/internal/bounded"
)

// Contamination model and allocator names.
const (
	ModelReplay    = "replay"
	ModelResidency = "residency"

	AllocSorted = "sorted"
	AllocFIFO   = "fifo"
	AllocLIFO   = "lifo"

	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// Incident is a validated incident file. Times are UTC.
type Incident struct {
	ID           string
	Title        string
	Models       []string
	WindowStart  time.Time // inclusive
	WindowEnd    time.Time // exclusive
	LaunchedAt   *time.Time
	DiscoveredAt *time.Time
	AwareAt      *time.Time
	ContainedAt  *time.Time
	AsOf         *time.Time // nil: the caller decides (flag --as-of, or now)

	Capacity      Capacity
	Contamination Contamination
	Provider      Provider
	Notices       Notices
	Join          Join
	// Sources are the case's logs (sources:), loaded when no LOG argument is given.
	Sources []Source

	// Path is the incident file itself; Dir the folder relative paths resolve against.
	Path string
	Dir  string
}

// Capacity holds the pool sizes and the timeline that overrides them.
type Capacity struct {
	MaxContextTokens  int64
	PrefillPoolTokens int64
	DecodePoolTokens  int64
	TimelinePath      string // resolved path, "" when none
	Timeline          []CapacityChange
}

// CapacityChange is one row of the capacity timeline: from ValidFrom, until
// the next row for the same instance and role, the pool holds PoolTokens.
type CapacityChange struct {
	Instance   string
	Role       string // prefill | decode
	PoolTokens int64
	ValidFrom  time.Time
}

// Contamination selects the exposure model.
type Contamination struct {
	Model             string // replay | residency
	Allocator         string // sorted | fifo | lifo
	PageSize          int64
	ResidencyLookback time.Duration
	PossibleLookback  time.Duration
	Evidence          Evidence
}

// Evidence holds the thresholds of a strong, specific content match
// (contamination.evidence; package textmatch defines the figures).
type Evidence struct {
	MinShingles   int // shared shingles that carry weight
	MinRunWords   int // longest shared run of words that carry weight
	CommonTenants int // text in the prompts of this many distinct tenants carries no weight
}

// DefaultEvidence holds on natural text (docs/evidence.md says how it was chosen).
var DefaultEvidence = Evidence{MinShingles: 5, MinRunWords: 10, CommonTenants: 3}

// MinRunWordsFloor is the smallest min_run_words: a shared run this long
// always holds a fingerprint of both texts (textmatch.MinRunFloor).
const MinRunWordsFloor = 8

// rawEvidence is contamination.evidence as written; nil: not given.
type rawEvidence struct {
	MinShingles   *int `yaml:"min_shingles"`
	MinRunWords   *int `yaml:"min_run_words"`
	CommonTenants *int `yaml:"common_tenants"`
}

// parse fills the defaults and checks the ranges, naming each bad key.
func (r *rawEvidence) parse(bad func(string, ...any)) Evidence {
	e := DefaultEvidence
	if r == nil {
		return e
	}
	set := func(key string, v *int, floor int, dst *int) {
		if v == nil {
			return
		}
		if *v < floor {
			bad("contamination.evidence.%s: must be at least %d, got %d", key, floor, *v)
			return
		}
		*dst = *v
	}
	set("min_shingles", r.MinShingles, 1, &e.MinShingles)
	set("min_run_words", r.MinRunWords, MinRunWordsFloor, &e.MinRunWords)
	set("common_tenants", r.CommonTenants, 2, &e.CommonTenants)
	return e
}

// LoadEvidence reads only contamination.evidence of an incident file (the
// sweep needs nothing else, and the rest may still be a draft).
func LoadEvidence(path string) (Evidence, error) {
	data, err := bounded.ReadFile(path, bounded.MaxYAMLBytes)
	if err != nil {
		return Evidence{}, errs.Usage("incident file: %w", err)
	}
	if err := bounded.CheckYAML(data); err != nil {
		return Evidence{}, errs.Usage("%s: %w", path, err)
	}
	var raw struct {
		Contamination struct {
			Evidence *rawEvidence `yaml:"evidence"`
		} `yaml:"contamination"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(yaml.FormatError(err, false, false)), "\n")
		return Evidence{}, errs.Usage("%s: %s", path, msg)
	}
	var problems []string
	e := raw.Contamination.Evidence.parse(func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) })
	if len(problems) > 0 {
		return Evidence{}, errs.Usage("%s: %s", path, strings.Join(problems, "; "))
	}
	return e, nil
}

// Join holds the tolerances of the join of real-layout records into one
// request per call (top-level `join:`).
type Join struct {
	RoomTolerance    time.Duration // prefill and decode records of one bootstrap_room (default 30s)
	GatewayTolerance time.Duration // a gateway and an engine record sharing no id (default 2s)
}

// Provider is the service operator sending the notices.
type Provider struct {
	Name     string
	Email    string // the bare address, parsed (see ParseAddress)
	DPOEmail string // likewise
	Country  string
	// Display names given with the addresses ("Data Protection Officer <dpo@...>").
	EmailName, DPOName string
}

// Notices holds the notices' settings: language-neutral keys, and custom
// wording per language (notices.en, notices.fr; wording keys found directly
// under notices count as English). A language without wording uses
// leakmap's own words for it.
type Notices struct {
	DeletionDeadline *time.Time
	Wording          map[string]Wording // by language; only languages given
}

// Wording is one language's custom wording; empty fields are not given.
type Wording struct {
	// Title is the case's title in this language, for the Regulator sheet
	// (the top-level title is the report's, and counts as English).
	Title           string
	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
	// DelayReasons are the reasons a regulator notification made after the
	// 72-hour deadline must give (GDPR Art. 33(1)).
	DelayReasons string
}

// WordingKeys are the incident file's names of the wording fields, in order.
var WordingKeys = []string{"title", "data_categories", "consequences", "measures_taken", "measures_planned", "delay_reasons"}

// RegulatorOnly reports whether a wording key is written in the regulator's
// filing alone (the Regulator sheet's title, a late notice's reasons), so
// that only the regulator notice's language needs it.
func RegulatorOnly(key string) bool { return key == "title" || key == "delay_reasons" }

// Keys lists the wording keys w sets, in WordingKeys order.
func (w Wording) Keys() []string {
	set := []bool{w.Title != "", len(w.DataCategories) > 0, w.Consequences != "", len(w.MeasuresTaken) > 0, len(w.MeasuresPlanned) > 0, w.DelayReasons != ""}
	var out []string
	for i, k := range WordingKeys {
		if set[i] {
			out = append(out, k)
		}
	}
	return out
}

// NoticeLanguages are the languages custom wording may be given in.
var NoticeLanguages = []string{"en", "fr"}

type rawWording struct {
	Title           string   `yaml:"title"`
	DataCategories  []string `yaml:"data_categories"`
	Consequences    string   `yaml:"consequences"`
	MeasuresTaken   []string `yaml:"measures_taken"`
	MeasuresPlanned []string `yaml:"measures_planned"`
	DelayReasons    string   `yaml:"delay_reasons"`
}

func (r *rawWording) wording() Wording {
	if r == nil {
		return Wording{}
	}
	return Wording{Title: strings.TrimSpace(r.Title), DataCategories: r.DataCategories, Consequences: strings.TrimSpace(r.Consequences),
		MeasuresTaken: r.MeasuresTaken, MeasuresPlanned: r.MeasuresPlanned, DelayReasons: strings.TrimSpace(r.DelayReasons)}
}

type rawFile struct {
	ID     string   `yaml:"id"`
	Title  string   `yaml:"title"`
	Models []string `yaml:"models"`
	Window struct {
		Start string `yaml:"start"`
		End   string `yaml:"end"`
	} `yaml:"window"`
	LaunchedAt   string `yaml:"launched_at"`
	DiscoveredAt string `yaml:"discovered_at"`
	AwareAt      string `yaml:"aware_at"`
	ContainedAt  string `yaml:"contained_at"`
	AsOf         string `yaml:"as_of"`
	Capacity     struct {
		MaxContextTokens  int64  `yaml:"max_context_tokens"`
		PrefillPoolTokens int64  `yaml:"prefill_pool_tokens"`
		DecodePoolTokens  int64  `yaml:"decode_pool_tokens"`
		Timeline          string `yaml:"timeline"`
	} `yaml:"capacity"`
	Contamination struct {
		Model             string       `yaml:"model"`
		Allocator         string       `yaml:"allocator"`
		PageSize          *int64       `yaml:"page_size"`
		ResidencyLookback string       `yaml:"residency_lookback"`
		PossibleLookback  string       `yaml:"possible_lookback"`
		Evidence          *rawEvidence `yaml:"evidence"`
	} `yaml:"contamination"`
	Provider struct {
		Name     string `yaml:"name"`
		Email    string `yaml:"email"`
		DPOEmail string `yaml:"dpo_email"`
		Country  string `yaml:"country"`
	} `yaml:"provider"`
	Notices struct {
		// Wording keys directly under notices: English.
		Title            string      `yaml:"title"`
		DataCategories   []string    `yaml:"data_categories"`
		Consequences     string      `yaml:"consequences"`
		MeasuresTaken    []string    `yaml:"measures_taken"`
		MeasuresPlanned  []string    `yaml:"measures_planned"`
		DelayReasons     string      `yaml:"delay_reasons"`
		DeletionDeadline string      `yaml:"deletion_deadline"`
		En               *rawWording `yaml:"en"`
		Fr               *rawWording `yaml:"fr"`
	} `yaml:"notices"`
	Join struct {
		RoomTolerance    string `yaml:"room_tolerance"`
		GatewayTolerance string `yaml:"gateway_tolerance"`
	} `yaml:"join"`
	Sources []rawSource `yaml:"sources"`
}

// Load reads, validates and resolves an incident file and its capacity
// timeline. Every problem is an errs.ErrUsage error naming the field.
func Load(path string) (*Incident, error) {
	data, err := bounded.ReadFile(path, bounded.MaxYAMLBytes)
	if err != nil {
		return nil, errs.Usage("incident file: %w", err)
	}
	inc, err := Parse(data, filepath.Dir(path))
	if err != nil {
		return nil, errs.Usage("%s: %w", path, err)
	}
	inc.Path = path
	return inc, nil
}

// Parse validates incident YAML; dir resolves relative paths.
func Parse(data []byte, dir string) (*Incident, error) {
	var raw rawFile
	if err := bounded.CheckYAML(data); err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalWithOptions(data, &raw, yaml.Strict()); err != nil {
		// The YAML library prints source context over several lines; keep the first.
		msg, _, _ := strings.Cut(strings.TrimSpace(yaml.FormatError(err, false, false)), "\n")
		return nil, errors.New(msg)
	}
	inc := &Incident{ID: strings.TrimSpace(raw.ID), Title: raw.Title, Dir: dir}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	if inc.ID == "" {
		bad("id: missing")
	}
	for i, m := range raw.Models {
		if strings.TrimSpace(m) == "" {
			bad("models[%d]: empty model name", i)
			continue
		}
		inc.Models = append(inc.Models, strings.TrimSpace(m))
	}
	if len(raw.Models) == 0 {
		bad("models: empty; list at least one model in scope")
	}

	reqTime := func(field, s string) time.Time {
		if s == "" {
			bad("%s: missing", field)
			return time.Time{}
		}
		t, err := ParseTime(s)
		if err != nil {
			bad("%s: %v", field, err)
		}
		return t
	}
	optTime := func(field, s string) *time.Time {
		if s == "" {
			return nil
		}
		t, err := ParseTime(s)
		if err != nil {
			bad("%s: %v", field, err)
			return nil
		}
		return &t
	}
	inc.WindowStart = reqTime("window.start", raw.Window.Start)
	inc.WindowEnd = reqTime("window.end", raw.Window.End)
	if !inc.WindowStart.IsZero() && !inc.WindowEnd.IsZero() && !inc.WindowEnd.After(inc.WindowStart) {
		bad("window.end: %s is not after window.start %s", FormatTime(inc.WindowEnd), FormatTime(inc.WindowStart))
	}
	inc.LaunchedAt = optTime("launched_at", raw.LaunchedAt)
	inc.DiscoveredAt = optTime("discovered_at", raw.DiscoveredAt)
	aware := reqTime("aware_at", raw.AwareAt)
	if !aware.IsZero() {
		inc.AwareAt = &aware
	}
	inc.ContainedAt = optTime("contained_at", raw.ContainedAt)
	inc.AsOf = optTime("as_of", raw.AsOf)

	c := raw.Capacity
	inc.Capacity = Capacity{MaxContextTokens: c.MaxContextTokens, PrefillPoolTokens: c.PrefillPoolTokens, DecodePoolTokens: c.DecodePoolTokens}
	if c.PrefillPoolTokens <= 0 {
		bad("capacity.prefill_pool_tokens: must be a positive number of tokens, got %d", c.PrefillPoolTokens)
	}
	if c.DecodePoolTokens <= 0 {
		bad("capacity.decode_pool_tokens: must be a positive number of tokens, got %d", c.DecodePoolTokens)
	}
	if c.MaxContextTokens < 0 {
		bad("capacity.max_context_tokens: must not be negative, got %d", c.MaxContextTokens)
	}
	if c.Timeline != "" {
		p := c.Timeline
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		inc.Capacity.TimelinePath = p
		tl, err := LoadTimeline(p)
		if err != nil {
			bad("capacity.timeline: %v", err)
		}
		inc.Capacity.Timeline = tl
	}

	k := raw.Contamination
	inc.Contamination = Contamination{Model: k.Model, Allocator: k.Allocator, PageSize: 1,
		ResidencyLookback: 30 * time.Minute, PossibleLookback: 10 * time.Minute}
	if inc.Contamination.Model == "" {
		inc.Contamination.Model = ModelReplay
	}
	if inc.Contamination.Allocator == "" {
		inc.Contamination.Allocator = AllocSorted
	}
	switch inc.Contamination.Model {
	case ModelReplay, ModelResidency:
	default:
		bad("contamination.model: unknown model %q (want replay or residency)", k.Model)
	}
	switch inc.Contamination.Allocator {
	case AllocSorted, AllocFIFO, AllocLIFO:
	default:
		bad("contamination.allocator: unknown allocator %q (want sorted, fifo or lifo)", k.Allocator)
	}
	if k.PageSize != nil {
		if *k.PageSize < 1 {
			bad("contamination.page_size: must be at least 1, got %d", *k.PageSize)
		}
		inc.Contamination.PageSize = *k.PageSize
	}
	dur := func(field, s string, def time.Duration) time.Duration {
		if s == "" {
			return def
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			bad("%s: %q is not a positive Go duration (e.g. 10m, 1h30m)", field, s)
			return def
		}
		return d
	}
	inc.Contamination.ResidencyLookback = dur("contamination.residency_lookback", k.ResidencyLookback, inc.Contamination.ResidencyLookback)
	inc.Contamination.PossibleLookback = dur("contamination.possible_lookback", k.PossibleLookback, inc.Contamination.PossibleLookback)
	inc.Contamination.Evidence = k.Evidence.parse(bad)

	inc.Join = Join{
		RoomTolerance:    dur("join.room_tolerance", raw.Join.RoomTolerance, 30*time.Second),
		GatewayTolerance: dur("join.gateway_tolerance", raw.Join.GatewayTolerance, 2*time.Second),
	}

	inc.Provider = Provider{Name: raw.Provider.Name, Email: raw.Provider.Email, DPOEmail: raw.Provider.DPOEmail, Country: raw.Provider.Country}
	parseProvider(&inc.Provider, bad)
	inc.Notices = Notices{
		DeletionDeadline: optTime("notices.deletion_deadline", raw.Notices.DeletionDeadline),
		Wording:          map[string]Wording{},
	}
	n := raw.Notices
	top := (&rawWording{n.Title, n.DataCategories, n.Consequences, n.MeasuresTaken, n.MeasuresPlanned, n.DelayReasons}).wording()
	for lang, r := range map[string]*rawWording{"en": raw.Notices.En, "fr": raw.Notices.Fr} {
		if w := r.wording(); len(w.Keys()) > 0 {
			inc.Notices.Wording[lang] = w
		}
	}
	if len(top.Keys()) > 0 {
		if _, both := inc.Notices.Wording["en"]; both {
			bad("notices: wording keys (%s) directly under notices count as English, and notices.en is given too: put them under notices.en", strings.Join(top.Keys(), ", "))
		} else {
			inc.Notices.Wording["en"] = top
		}
	}
	checkRanges(inc, bad)
	inc.Sources = parseSources(raw.Sources, dir, bad)

	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return inc, nil
}

// InScope reports whether model is one of the incident's models.
func (inc *Incident) InScope(model string) bool {
	for _, m := range inc.Models {
		if m == model {
			return true
		}
	}
	return false
}

// PoolAt returns the pool size in force for instance and role at t: the
// latest timeline row with ValidFrom <= t, else the incident default.
func (c *Capacity) PoolAt(instance, role string, t time.Time) int64 {
	pool := c.PrefillPoolTokens
	if role == RoleDecode {
		pool = c.DecodePoolTokens
	}
	for _, ch := range c.Timeline { // sorted by ValidFrom
		if ch.Instance == instance && ch.Role == role && !ch.ValidFrom.After(t) {
			pool = ch.PoolTokens
		}
	}
	return pool
}

// LoadTimeline reads a capacity CSV: instance,role,pool_tokens,valid_from.
func LoadTimeline(path string) ([]CapacityChange, error) {
	data, err := bounded.ReadFile(path, bounded.MaxTimelineBytes)
	if err != nil {
		return nil, err
	}
	return ParseTimeline(data, filepath.Base(path))
}

// ParseTimeline parses capacity CSV bytes; name prefixes line errors.
func ParseTimeline(data []byte, name string) ([]CapacityChange, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	want := []string{"instance", "role", "pool_tokens", "valid_from"}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, w := range want {
		if _, ok := col[w]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q (want header %s)", name, w, strings.Join(want, ","))
		}
	}
	var out []CapacityChange
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		ch := CapacityChange{Instance: get("instance"), Role: get("role")}
		if ch.Instance == "" {
			return nil, fmt.Errorf("%s:%d: instance: empty", name, line)
		}
		if ch.Role != RolePrefill && ch.Role != RoleDecode {
			return nil, fmt.Errorf("%s:%d: role: %q is not prefill or decode", name, line, ch.Role)
		}
		n, err := strconv.ParseInt(get("pool_tokens"), 10, 64)
		if err != nil || n <= 0 || n > MaxPoolTokens {
			return nil, fmt.Errorf("%s:%d: pool_tokens: %q is not a positive integer of at most %d", name, line, get("pool_tokens"), int64(MaxPoolTokens))
		}
		ch.PoolTokens = n
		ch.ValidFrom, err = ParseTime(get("valid_from"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: valid_from: %w", name, line, err)
		}
		out = append(out, ch)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ValidFrom.Before(out[j].ValidFrom) })
	return out, nil
}

// ParseTime parses an RFC 3339 time (with Z or an offset) into UTC.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// FormatTime writes t in UTC RFC 3339, the one time format of every output:
// whole seconds, or microseconds when t has a sub-second part, matching the
// SQL macro rfc3339 that every CSV output uses.
func FormatTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format(time.RFC3339)
	}
	return t.Format("2006-01-02T15:04:05.000000Z07:00")
}
