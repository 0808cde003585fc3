package ingest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leakmap/leakmap/ingest/layouts"
)

// Canonical field names, in the order of the requests table.
var canonicalFields = []string{
	"request_id", "ts", "end_ts", "tenant_id", "model", "prompt_tokens",
	"completion_tokens", "status", "prefill_instance", "decode_instance",
	"prompt_text", "response_text",
}

// requiredFields must have a value on every loaded row.
var requiredFields = []string{"request_id", "ts", "tenant_id", "model", "prompt_tokens"}

// Record structures a mapping reads.
const (
	layoutCanonical = "canonical" // one object (or CSV/Parquet row) per record
	layoutEngine    = "engine"    // received/finished event pairs joined on a key
)

// sglangEvents are the old engine layout's events (a mapping file's
// layout: engine).
var sglangEvents = layouts.Events{Key: "rid", Kind: "event", Received: "request.received", Finished: "request.finished"}

// Mapping is a compiled layout or mapping file (package layouts has the
// YAML shape; docs/layouts.md the user's view) for one source: where each
// field of the target table comes from. A canonical mapping fills requests;
// any other role fills source_records (see records.go).
type Mapping struct {
	Layout               string            // layoutCanonical or layoutEngine
	Constants            map[string]string // field: value when the record has none
	TimeFormat           string
	DurationField        string
	DurationUnit         string
	InstanceFromFileName bool

	name      string         // ingest_files.preset: the layout's name or mapping:<file>
	role      string         // layouts.Role*
	label     string         // source_records.source: sources[i] or cli
	toRecords bool           // target source_records (else requests)
	events    layouts.Events // when Layout is layoutEngine
	records   path           // records inside each JSON document; nil: each line or row
	fileName  *regexp.Regexp // named groups are $file.NAME
	fields    []string       // the target's fields, in table order
	required  []string
	specs     [][]alt // specs[i]: where fields[i] comes from; nil: nowhere
	durPath   path
	loc       *time.Location
	hint      string
	desc      string
	// What of a line the mapping reads (jsonpick.go), for the records
	// targets: pick for a JSON Lines record or a CSV row's cells,
	// pickEvent for an engine event line; nil decodes every line whole.
	pick, pickEvent *pickTree
}

// alt is one compiled alternative of a field's source.
type alt struct {
	p     path
	table map[string]string
}

// SourceKeys are a source's own keys (DESIGN.md "Real logs"), applied over
// its layout.
type SourceKeys struct {
	Role        string // default: the layout's
	Model       string // model of records that carry none
	Timezone    string // zone of times written without an offset (default: the layout's, else UTC)
	TenantField string // path of the tenant, replacing the layout's
	Tenant      string // constant tenant, for a per-account export
	Label       string // source_records.source
}

// compileMapping turns a layout or mapping file and a source's keys into a
// Mapping.
func compileMapping(f *layouts.File, k SourceKeys) (*Mapping, error) {
	m := &Mapping{name: f.Name(), Constants: map[string]string{}, TimeFormat: f.TimeFormat,
		DurationField: f.DurationField, DurationUnit: f.DurationUnit,
		InstanceFromFileName: f.InstanceFromFileName, label: k.Label, hint: f.Hint, desc: f.Description}
	for key, v := range f.Constants {
		m.Constants[key] = v
	}
	m.role = k.Role
	if m.role == "" {
		m.role = f.DefaultRole()
	}
	if m.role == "" {
		return nil, fmt.Errorf("role: missing; layout %s takes %s", f.Name(), strings.Join(f.Roles, ", "))
	}
	if err := f.CheckRole(m.role); err != nil {
		return nil, err
	}
	m.toRecords = m.role != layouts.RoleCanonical
	switch f.Layout {
	case "", layoutCanonical:
		m.Layout = layoutCanonical
	case layoutEngine:
		m.Layout, m.events = layoutEngine, sglangEvents
	default:
		return nil, fmt.Errorf("layout %q: want canonical or engine (or extends: a named layout)", f.Layout)
	}
	if f.Events != nil {
		e := *f.Events
		if e.Key == "" || e.Kind == "" || e.Received == "" || e.Finished == "" {
			return nil, fmt.Errorf("events: key, kind, received and finished are all needed")
		}
		m.Layout, m.events = layoutEngine, e
	}
	if f.Records != "" {
		if m.Layout == layoutEngine {
			return nil, fmt.Errorf("records and events cannot be used together")
		}
		p, err := parsePath(f.Records)
		if err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		m.records = p
	}
	if f.FileName != "" {
		re, err := regexp.Compile(f.FileName)
		if err != nil {
			return nil, fmt.Errorf("file_name: %w", err)
		}
		m.fileName = re
	}
	m.fields, m.required = canonicalFields, requiredFields
	if m.toRecords {
		m.fields, m.required = recordFields, recordRequired(m.role)
	}
	specs := map[string]layouts.Spec{}
	for key, s := range f.Fields {
		key = m.fieldName(key)
		if !slices.Contains(m.fields, key) {
			return nil, fmt.Errorf("unknown field %q (want one of %s)", key, strings.Join(m.fields, ", "))
		}
		specs[key] = s
	}
	for key := range f.Constants {
		if n := m.fieldName(key); !slices.Contains(m.fields, n) {
			return nil, fmt.Errorf("constants: unknown field %q (want one of %s)", key, strings.Join(m.fields, ", "))
		} else if n != key {
			m.Constants[n] = m.Constants[key]
			delete(m.Constants, key)
		}
	}
	if k.TenantField != "" {
		roots := f.TenantFieldPaths
		if len(roots) == 0 {
			roots = []string{"{}"}
		}
		var s layouts.Spec
		for _, r := range roots {
			s = append(s, layouts.Alt{Path: strings.ReplaceAll(r, "{}", k.TenantField)})
		}
		specs["tenant_id"] = s
	}
	if k.Tenant != "" {
		m.Constants["tenant_id"] = k.Tenant
	}
	if k.Model != "" && m.Constants["model"] == "" {
		m.Constants["model"] = k.Model
	}
	switch m.TimeFormat {
	case "", "auto", "rfc3339", "epoch_s", "epoch_ms", "epoch_ns":
	default:
		if strings.Contains(m.TimeFormat, "%") {
			layout, err := strftimeToGo(m.TimeFormat)
			if err != nil {
				return nil, err
			}
			m.TimeFormat = layout
		}
	}
	m.loc = time.UTC
	zone := f.TimeZone
	if k.Timezone != "" {
		zone = k.Timezone
	}
	if zone != "" {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			return nil, fmt.Errorf("time_zone: %w", err)
		}
		m.loc = loc
	}
	switch m.DurationUnit {
	case "", "ms", "s":
	default:
		return nil, fmt.Errorf("duration_unit %q: want ms or s", m.DurationUnit)
	}
	if m.DurationField != "" {
		p, err := parsePath(m.DurationField)
		if err != nil {
			return nil, fmt.Errorf("duration_field: %w", err)
		}
		m.durPath = p
	}
	for key, v := range m.Constants {
		if _, err := m.convert(key, v); err != nil {
			return nil, fmt.Errorf("constant %s: %w", key, err)
		}
	}
	m.specs = make([][]alt, len(m.fields))
	for i, field := range m.fields {
		s, ok := specs[field]
		if !ok && !m.toRecords && m.Layout == layoutCanonical {
			s = layouts.Spec{{Path: field}}
		}
		for _, a := range s {
			p, err := parsePath(a.Path)
			if err != nil {
				return nil, fmt.Errorf("fields.%s: %w", field, err)
			}
			m.specs[i] = append(m.specs[i], alt{p: p, table: a.Map})
		}
	}
	if m.toRecords {
		m.pick, m.pickEvent = m.pickTrees()
	}
	return m, nil
}

// pickTrees are the parts of a record and of an engine event line the
// mapping's paths read (jsonpick.go); nil where a path needs a line whole.
func (m *Mapping) pickTrees() (rec, event *pickTree) {
	var paths []path
	for _, s := range m.specs {
		for _, a := range s {
			paths = append(paths, a.p)
		}
	}
	if m.durPath != nil {
		paths = append(paths, m.durPath)
	}
	rec = &pickTree{}
	for _, p := range paths {
		rec.addLookup(p)
	}
	if m.Layout != layoutEngine {
		return rec, nil
	}
	// An engine record is {key: rid, received: event, finished: event}:
	// what it reads under received and finished, each event's line gives.
	event = &pickTree{}
	event.addName(m.events.Key)
	event.addName(m.events.Kind)
	for _, p := range paths {
		if p[0].kind == stepField && (p[0].name == "received" || p[0].name == "finished") {
			if len(p) == 1 {
				return rec, nil
			}
			event.add(p[1:])
		}
	}
	if event.whole {
		event = nil
	}
	return rec, event
}

// fieldName maps another name of a field to the target's: request_id and
// rid are one field.
func (m *Mapping) fieldName(f string) string {
	switch {
	case m.toRecords && f == "request_id":
		return "rid"
	case !m.toRecords && f == "rid":
		return "request_id"
	}
	return f
}

// presetMapping returns the named layout as a canonical-target mapping or
// a records one, by the layout's default role.
func presetMapping(name string) (*Mapping, error) {
	f, err := layouts.Get(name)
	if err != nil {
		return nil, err
	}
	return compileMapping(f, SourceKeys{Label: "cli"})
}

// source returns the first source path of a field ("" when none).
func (m *Mapping) source(field string) string {
	for i, f := range m.fields {
		if f == field && len(m.specs[i]) > 0 {
			return m.specs[i][0].p.String()
		}
	}
	return ""
}

// layoutName is source_records.layout: the named layout, or mapping:<file>.
func (m *Mapping) layoutName() string { return m.name }

// isIdentity reports whether the mapping is the plain canonical schema, the
// only one the DuckDB fast path loads.
func (m *Mapping) isIdentity() bool {
	if m.toRecords || m.Layout != layoutCanonical || m.records != nil || len(m.Constants) > 0 || m.DurationField != "" ||
		m.InstanceFromFileName || m.fileName != nil || (m.TimeFormat != "" && m.TimeFormat != "auto" && m.TimeFormat != "rfc3339") ||
		(m.loc != nil && m.loc != time.UTC) {
		return false
	}
	for i, f := range canonicalFields {
		s := m.specs[i]
		if len(s) != 1 || s[0].table != nil || len(s[0].p) != 1 || s[0].p[0].kind != stepField || s[0].p[0].name != f {
			return false
		}
	}
	return true
}

// instance reads what the file name tells: the old engine rule (host up to
// the first dot) and the layout's file_name groups.
func (m *Mapping) instance(name string) fileInstance {
	inst := instanceFromName(name)
	if m.fileName != nil {
		if sub := m.fileName.FindStringSubmatch(filepath.Base(name)); sub != nil {
			inst.groups = map[string]any{}
			for i, g := range m.fileName.SubexpNames() {
				if g != "" && sub[i] != "" {
					inst.groups[g] = sub[i]
				}
			}
		}
	}
	return inst
}

// strftimeToGo converts the common strftime directives to a Go layout.
func strftimeToGo(f string) (string, error) {
	repl := map[byte]string{'Y': "2006", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05",
		'f': "999999", 'z': "-0700", 'Z': "MST", 'b': "Jan", 'y': "06", 'e': "_2", 'T': "15:04:05", 'F': "2006-01-02", '%': "%"}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return "", fmt.Errorf("time_format %q: lone %%", f)
		}
		r, ok := repl[f[i+1]]
		if !ok {
			keys := make([]string, 0, len(repl))
			for k := range repl {
				keys = append(keys, "%"+string(k))
			}
			sort.Strings(keys)
			return "", fmt.Errorf("time_format %q: %%%c not supported (use %s or a Go layout)", f, f[i+1], strings.Join(keys, " "))
		}
		b.WriteString(r)
		i++
	}
	return b.String(), nil
}
