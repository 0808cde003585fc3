package ingest

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/leakmap/leakmap/internal/bounded"
)

// Canonical field names, in the order of the requests table.
var canonicalFields = []string{
	"request_id", "ts", "end_ts", "tenant_id", "model", "prompt_tokens",
	"completion_tokens", "status", "prefill_instance", "decode_instance",
	"prompt_text", "response_text",
}

// requiredFields must have a value on every loaded row.
var requiredFields = []string{"request_id", "ts", "tenant_id", "model", "prompt_tokens"}

// Layouts a mapping reads records from.
const (
	layoutCanonical = "canonical" // one object (or CSV/Parquet row) per request
	layoutEngine    = "engine"    // received/finished event pairs joined on rid
)

// Mapping says where each canonical field comes from. The presets are
// mappings; a user's mapping file (YAML) has the same shape:
//
//	layout: canonical          # or engine (event pairs joined on rid); default canonical
//	fields:                    # canonical field: source field; dots walk into nested JSON objects
//	  request_id: id
//	  ts: created_at
//	  tenant_id: meta.account
//	  prompt_tokens: usage.prompt_tokens
//	constants:                 # canonical field: one value for every row (a source field wins)
//	  model: glm-5.3
//	time_format: auto          # auto | rfc3339 | epoch_s | epoch_ms | strftime (%Y-%m-%d %H:%M:%S) | Go layout
//	time_zone: UTC             # zone of times written without an offset
//	duration_field: duration   # optional: end_ts = ts + duration, when end_ts has no source
//	duration_unit: ms          # ms (default) or s
//	instance_from_file_name: false  # engine logs: the host is the file name (see enginePreset)
//
// A canonical field not listed under fields is read from the column of the
// same name when the layout is canonical.
type Mapping struct {
	Layout               string            `yaml:"layout"`
	Fields               map[string]string `yaml:"fields"`
	Constants            map[string]string `yaml:"constants"`
	TimeFormat           string            `yaml:"time_format"`
	TimeZone             string            `yaml:"time_zone"`
	DurationField        string            `yaml:"duration_field"`
	DurationUnit         string            `yaml:"duration_unit"`
	InstanceFromFileName bool              `yaml:"instance_from_file_name"`

	name string         // canonical | engine | gateway | mapping:<file>
	loc  *time.Location // parsed TimeZone
	// paths[i] is the source path of canonicalFields[i] split on dots; nil: none.
	paths [][]string
}

// canonicalPreset: the canonical schema of DESIGN.md, field names as they are.
func canonicalPreset() *Mapping { return &Mapping{Layout: layoutCanonical} }

// gatewayPreset maps an API gateway's log (log-layouts.md): one row per call.
// request_id <- id, ts <- created_at, tenant_id <- account_id, model <- model,
// status <- status_code, prompt_tokens <- tokens_in, completion_tokens <-
// tokens_out, end_ts <- created_at + duration (milliseconds). The gateway
// knows no machines: both instances stay empty.
func gatewayPreset() *Mapping {
	return &Mapping{
		Layout: layoutCanonical,
		Fields: map[string]string{
			"request_id": "id", "ts": "created_at", "tenant_id": "account_id",
			"model": "model", "status": "status_code", "prompt_tokens": "tokens_in",
			"completion_tokens": "tokens_out",
			// Not in the gateway layout: keep them unmapped rather than
			// picking up same-named fields by accident.
			"end_ts": "", "prefill_instance": "", "decode_instance": "",
			"prompt_text": "", "response_text": "",
		},
		DurationField: "duration",
		DurationUnit:  "ms",
	}
}

// enginePreset maps a serving engine's JSON request log (log-layouts.md).
// Records are request.received and request.finished events joined on rid;
// paths start with "received." or "finished." (the event objects).
// request_id <- rid; ts <- received.timestamp; end_ts <- finished.timestamp;
// tenant_id <- received.obj.user (deployments that pass one; otherwise map
// it); model <- received.obj.model (else Options.Model or a constant);
// prompt_tokens / completion_tokens <- finished.out.meta_info.*; prompt_text
// <- received.obj.text; response_text <- finished.out.text; the instance is
// the file's name up to its first dot (one file per host): a name holding
// "prefill" sets prefill_instance, "decode" sets decode_instance, any other
// sets both (a host that does both). The engine logs no HTTP status.
func enginePreset() *Mapping {
	return &Mapping{
		Layout: layoutEngine,
		Fields: map[string]string{
			"request_id": "rid", "ts": "received.timestamp", "end_ts": "finished.timestamp",
			"tenant_id": "received.obj.user", "model": "received.obj.model",
			"prompt_tokens":     "finished.out.meta_info.prompt_tokens",
			"completion_tokens": "finished.out.meta_info.completion_tokens",
			"prompt_text":       "received.obj.text", "response_text": "finished.out.text",
			"status": "", "prefill_instance": "", "decode_instance": "",
		},
		InstanceFromFileName: true,
	}
}

// presetMapping returns the named preset.
func presetMapping(name string) (*Mapping, error) {
	var m *Mapping
	switch name {
	case "", "canonical":
		m, name = canonicalPreset(), "canonical"
	case "engine":
		m = enginePreset()
	case "gateway":
		m = gatewayPreset()
	default:
		return nil, fmt.Errorf("unknown preset %q (want canonical, engine or gateway)", name)
	}
	m.name = name
	return m, m.compile()
}

// loadMapping reads a user's mapping file.
func loadMapping(path string) (*Mapping, error) {
	b, err := bounded.ReadFile(path, bounded.MaxYAMLBytes)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	if err := bounded.CheckYAML(b); err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	var m Mapping
	if err := yaml.UnmarshalWithOptions(b, &m, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	m.name = "mapping:" + filepath.Base(path)
	if err := m.compile(); err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	return &m, nil
}

// compile checks the mapping and precomputes its paths.
func (m *Mapping) compile() error {
	if m.Layout == "" {
		m.Layout = layoutCanonical
	}
	if m.Layout != layoutCanonical && m.Layout != layoutEngine {
		return fmt.Errorf("layout %q: want canonical or engine", m.Layout)
	}
	known := map[string]bool{}
	for _, f := range canonicalFields {
		known[f] = true
	}
	for _, set := range []map[string]string{m.Fields, m.Constants} {
		for k := range set {
			if !known[k] {
				return fmt.Errorf("unknown canonical field %q (want one of %s)", k, strings.Join(canonicalFields, ", "))
			}
		}
	}
	switch m.TimeFormat {
	case "", "auto", "rfc3339", "epoch_s", "epoch_ms":
	default:
		if strings.Contains(m.TimeFormat, "%") {
			layout, err := strftimeToGo(m.TimeFormat)
			if err != nil {
				return err
			}
			m.TimeFormat = layout
		}
	}
	m.loc = time.UTC
	if m.TimeZone != "" {
		loc, err := time.LoadLocation(m.TimeZone)
		if err != nil {
			return fmt.Errorf("time_zone: %w", err)
		}
		m.loc = loc
	}
	switch m.DurationUnit {
	case "", "ms", "s":
	default:
		return fmt.Errorf("duration_unit %q: want ms or s", m.DurationUnit)
	}
	for k, v := range m.Constants {
		if _, err := convertField(k, v, m); err != nil {
			return fmt.Errorf("constant %s: %w", k, err)
		}
	}
	m.paths = make([][]string, len(canonicalFields))
	for i, f := range canonicalFields {
		src, ok := m.Fields[f]
		if !ok && m.Layout == layoutCanonical {
			src = f
		}
		if src != "" {
			m.paths[i] = strings.Split(src, ".")
		}
	}
	return nil
}

// source returns the source path of a canonical field ("" when none).
func (m *Mapping) source(field string) string {
	for i, f := range canonicalFields {
		if f == field && m.paths[i] != nil {
			return strings.Join(m.paths[i], ".")
		}
	}
	return ""
}

// isIdentity reports whether the mapping is the plain canonical schema, the
// only one the DuckDB fast path loads.
func (m *Mapping) isIdentity() bool {
	if m.Layout != layoutCanonical || len(m.Constants) > 0 || m.DurationField != "" ||
		m.InstanceFromFileName || (m.TimeFormat != "" && m.TimeFormat != "auto" && m.TimeFormat != "rfc3339") ||
		(m.loc != nil && m.loc != time.UTC) {
		return false
	}
	for i, f := range canonicalFields {
		if len(m.paths[i]) != 1 || m.paths[i][0] != f {
			return false
		}
	}
	return true
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
