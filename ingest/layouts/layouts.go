// Package layouts holds the named log layouts leakmap reads (one YAML file
// each, embedded) and the shape they share with a user's mapping file: where
// each field of a record comes from in the source's own rows. Adding a
// layout is adding a YAML file here; package ingest compiles and reads them.
package layouts

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/leakmap/leakmap/internal/bounded"
)

//go:embed *.yaml
var files embed.FS

// Roles a source can have (DESIGN.md "Real logs").
const (
	RoleCanonical = "canonical" // canonical rows, loaded straight into requests
	RoleGateway   = "gateway"
	RolePrefill   = "prefill"
	RoleDecode    = "decode"
	RoleEngine    = "engine" // an engine that does both prefill and decode
)

// File is a layout or a mapping file. Every key is optional; a mapping file
// that extends a layout overrides only what it names.
type File struct {
	Extends     string   `yaml:"extends"`     // a named layout this file overrides
	Description string   `yaml:"description"` // one line, for docs and errors
	Aliases     []string `yaml:"aliases"`     // other names of a named layout
	Role        string   `yaml:"role"`        // default role; "" means the source must say
	Roles       []string `yaml:"roles"`       // roles a source may give; empty: any but canonical

	// Layout is the old mapping-file key: canonical (one record per row) or
	// engine (received/finished pairs, the old engine preset's record).
	Layout string `yaml:"layout"`
	// Records is the path of the records inside each JSON document of a
	// file (a line, or a whole pretty-printed file), e.g. "result[]" or
	// "resourceSpans[].scopeSpans[].spans[]"; a document without the path's
	// first key is itself a record. Empty: each line or row is a record.
	Records string  `yaml:"records"`
	Events  *Events `yaml:"events"` // pair start/end events of one request into one record
	// FileName is a regular expression on the file's base name; its named
	// groups are fields $file.NAME (e.g. the host of an engine log).
	FileName string `yaml:"file_name"`

	Fields    map[string]Spec   `yaml:"fields"`    // record field: where it comes from
	Constants map[string]string `yaml:"constants"` // record field: value when the source has none
	// TenantFieldPaths turn a source's tenant_field into paths: "{}" is the
	// field as given ("received.obj.{}" for the engine's request object).
	TenantFieldPaths []string `yaml:"tenant_field_paths"`

	TimeFormat    string `yaml:"time_format"`    // auto | rfc3339 | epoch_s | epoch_ms | epoch_ns | strftime | Go layout
	TimeZone      string `yaml:"time_zone"`      // zone of times written without an offset
	DurationField string `yaml:"duration_field"` // end_ts = ts + duration (or ts = end_ts - duration)
	DurationUnit  string `yaml:"duration_unit"`  // ms (default) or s
	// InstanceFromFileName is the old engine preset's host rule: the file
	// name up to its first dot is the instance.
	InstanceFromFileName bool `yaml:"instance_from_file_name"`

	// Hint says, in refusals, how a file of this layout is usually made.
	Hint string `yaml:"hint"`

	name string // catalogue name, or mapping:<base name>
	set  map[string]bool
}

// Events pairs the events of one request (SGLang's request.received and
// request.finished) into one record {key, received: {...}, finished: {...}}.
type Events struct {
	Key      string `yaml:"key"`      // the field both events carry (rid)
	Kind     string `yaml:"kind"`     // the field naming the event (event)
	Received string `yaml:"received"` // its value on the first event
	Finished string `yaml:"finished"` // its value on the last event
}

// Spec is where one field comes from: alternatives tried in order, the
// first present wins.
type Spec []Alt

// Alt is one alternative: a path into the record, optionally mapped through
// a table (a value not in the table counts as absent).
type Alt struct {
	Path string            `yaml:"path"`
	Map  map[string]string `yaml:"map"`
}

// UnmarshalYAML takes a path, a list of paths or {path, map} objects, or one
// such object; "" (or null) means the field has no source.
func (s *Spec) UnmarshalYAML(unmarshal func(any) error) error {
	var raw any
	if err := unmarshal(&raw); err != nil {
		return err
	}
	out, err := specOf(raw)
	if err != nil {
		return err
	}
	*s = out
	return nil
}

func specOf(raw any) (Spec, error) {
	switch x := raw.(type) {
	case nil:
		return Spec{}, nil
	case string:
		if x == "" {
			return Spec{}, nil
		}
		return Spec{{Path: x}}, nil
	case []any:
		var out Spec
		for _, e := range x {
			s, err := specOf(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	case map[string]any:
		var a Alt
		for k, v := range x {
			switch k {
			case "path":
				p, ok := v.(string)
				if !ok {
					return nil, errors.New("path: want a string")
				}
				a.Path = p
			case "map":
				m, ok := v.(map[string]any)
				if !ok {
					return nil, errors.New("map: want {from: to}")
				}
				a.Map = map[string]string{}
				for from, to := range m {
					a.Map[from] = fmt.Sprint(to)
				}
			default:
				return nil, fmt.Errorf("unknown key %q (want path, map)", k)
			}
		}
		if a.Path == "" {
			return nil, errors.New("path: missing")
		}
		return Spec{a}, nil
	default:
		return nil, fmt.Errorf("want a path, a list of paths or {path, map}, not %T", raw)
	}
}

// Name is the layout's name: its catalogue name, or mapping:<file> for a
// user's mapping file.
func (f *File) Name() string { return f.name }

// Has reports whether the file itself (not what it extends) sets key.
func (f *File) Has(key string) bool { return f.set[key] }

// Names lists the named layouts, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(out)
	return out
}

// aliases maps an alias to its layout's name.
func aliases() map[string]string {
	out := map[string]string{}
	for _, n := range Names() {
		f, err := parseNamed(n)
		if err != nil {
			continue
		}
		for _, a := range f.Aliases {
			out[a] = n
		}
	}
	return out
}

// Canonical resolves an alias ("engine", "gateway") to the layout's name;
// "" is canonical. An unknown name comes back as it is.
func Canonical(name string) string {
	if name == "" {
		return "canonical"
	}
	if n, ok := aliases()[name]; ok {
		return n
	}
	return name
}

// Get returns the named layout (an alias works), with what it extends
// merged in.
func Get(name string) (*File, error) {
	return get(Canonical(name), 0)
}

func get(name string, depth int) (*File, error) {
	if depth > 8 {
		return nil, fmt.Errorf("layout %q: extends goes round in a circle", name)
	}
	f, err := parseNamed(name)
	if err != nil {
		return nil, err
	}
	return f.resolve(depth)
}

func parseNamed(name string) (*File, error) {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown layout %q (want %s)", name, strings.Join(append(Names(), "engine", "gateway"), ", "))
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", name, err)
	}
	f.name = name
	return f, nil
}

// Parse reads a layout or mapping file, keys checked strictly.
func Parse(b []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalWithOptions(b, &f, yaml.Strict()); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(yaml.FormatError(err, false, false)), "\n")
		return nil, errors.New(msg)
	}
	var keys map[string]any
	if err := yaml.Unmarshal(b, &keys); err != nil {
		return nil, err
	}
	f.set = map[string]bool{}
	for k := range keys {
		f.set[k] = true
	}
	return &f, nil
}

// Load reads a user's mapping file, with the layout it extends merged in.
func Load(path string) (*File, error) {
	b, err := bounded.ReadFile(path, bounded.MaxYAMLBytes)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	if err := bounded.CheckYAML(b); err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	f.name = "mapping:" + filepath.Base(path)
	out, err := f.resolve(0)
	if err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	return out, nil
}

// resolve merges f over the layout it extends.
func (f *File) resolve(depth int) (*File, error) {
	if f.Extends == "" {
		return f, nil
	}
	base, err := get(Canonical(f.Extends), depth+1)
	if err != nil {
		return nil, fmt.Errorf("extends: %w", err)
	}
	out := *base
	out.name, out.set, out.Extends = f.name, f.set, f.Extends
	out.Aliases = nil
	out.Fields = maps.Clone(base.Fields)
	if out.Fields == nil {
		out.Fields = map[string]Spec{}
	}
	maps.Copy(out.Fields, f.Fields)
	out.Constants = maps.Clone(base.Constants)
	if out.Constants == nil {
		out.Constants = map[string]string{}
	}
	maps.Copy(out.Constants, f.Constants)
	str := func(key string, dst *string, v string) {
		if f.set[key] {
			*dst = v
		}
	}
	str("description", &out.Description, f.Description)
	str("role", &out.Role, f.Role)
	str("layout", &out.Layout, f.Layout)
	str("records", &out.Records, f.Records)
	str("file_name", &out.FileName, f.FileName)
	str("time_format", &out.TimeFormat, f.TimeFormat)
	str("time_zone", &out.TimeZone, f.TimeZone)
	str("duration_field", &out.DurationField, f.DurationField)
	str("duration_unit", &out.DurationUnit, f.DurationUnit)
	str("hint", &out.Hint, f.Hint)
	if f.set["roles"] {
		out.Roles = f.Roles
	}
	if f.set["events"] {
		out.Events = f.Events
	}
	if f.set["tenant_field_paths"] {
		out.TenantFieldPaths = f.TenantFieldPaths
	}
	if f.set["instance_from_file_name"] {
		out.InstanceFromFileName = f.InstanceFromFileName
	}
	return &out, nil
}

// DefaultRole is the role a source of this layout has when it gives none:
// canonical for the canonical layout and a mapping file of canonical
// fields, the layout's own role otherwise ("" when the source must say).
func (f *File) DefaultRole() string {
	if f.Role != "" {
		return f.Role
	}
	if f.Extends == "" && f.Events == nil && f.Records == "" && len(f.Roles) == 0 {
		return RoleCanonical
	}
	return ""
}

// CheckRole says whether a source of this layout may have role.
func (f *File) CheckRole(role string) error {
	switch role {
	case RoleCanonical, RoleGateway, RolePrefill, RoleDecode, RoleEngine:
	default:
		return fmt.Errorf("role %q: want gateway, prefill, decode, engine or canonical", role)
	}
	if len(f.Roles) > 0 && !slices.Contains(f.Roles, role) {
		return fmt.Errorf("role %q: layout %s takes %s", role, f.name, strings.Join(f.Roles, ", "))
	}
	return nil
}

// HasModel reports whether the layout finds a model in its records (else a
// source of it must name one).
func (f *File) HasModel() bool {
	if s, ok := f.Fields["model"]; ok && len(s) > 0 {
		return true
	}
	if f.Constants["model"] != "" {
		return true
	}
	// A canonical mapping reads the column "model" unless told otherwise.
	_, mapped := f.Fields["model"]
	return f.DefaultRole() == RoleCanonical && !mapped
}
