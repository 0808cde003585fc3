package incident

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakmap/leakmap/ingest/layouts"
)

// Source is one entry of the incident file's sources: the case's logs and
// how to read them (DESIGN.md "Real logs"). Paths are resolved against the
// incident file's folder; globs stay globs.
type Source struct {
	Label       string // sources[i], as source_records names it
	Layout      string // a named layout (package layouts), or ""
	Mapping     string // a mapping file (resolved path), or ""
	Paths       []string
	Role        string // the layout's default when the file gives none
	Model       string
	Timezone    string
	TenantField string
	Tenant      string
}

type rawSource struct {
	Layout      string   `yaml:"layout"`
	Mapping     string   `yaml:"mapping"`
	Paths       []string `yaml:"paths"`
	Role        string   `yaml:"role"`
	Model       string   `yaml:"model"`
	Timezone    string   `yaml:"timezone"`
	TenantField string   `yaml:"tenant_field"`
	Tenant      string   `yaml:"tenant"`
}

// parseSources validates sources: every problem names the source's index
// and key.
func parseSources(raw []rawSource, dir string, bad func(string, ...any)) []Source {
	var out []Source
	for i, r := range raw {
		at := fmt.Sprintf("sources[%d]", i)
		s := Source{Label: at, Layout: strings.TrimSpace(r.Layout), Role: strings.TrimSpace(r.Role),
			Model: strings.TrimSpace(r.Model), Timezone: strings.TrimSpace(r.Timezone),
			TenantField: strings.TrimSpace(r.TenantField), Tenant: strings.TrimSpace(r.Tenant)}
		var f *layouts.File
		var err error
		switch mapping := strings.TrimSpace(r.Mapping); {
		case s.Layout != "" && mapping != "":
			bad("%s: layout and mapping: give one, not both", at)
			continue
		case s.Layout == "" && mapping == "":
			bad("%s.layout: missing (a named layout: %s; or mapping: FILE)", at, strings.Join(layouts.Names(), ", "))
			continue
		case mapping != "":
			s.Mapping = resolve(dir, mapping)
			if f, err = layouts.Load(s.Mapping); err != nil {
				bad("%s.mapping: %v", at, err)
				continue
			}
		default:
			if f, err = layouts.Get(s.Layout); err != nil {
				bad("%s.layout: %v", at, err)
				continue
			}
		}
		if len(r.Paths) == 0 {
			bad("%s.paths: missing (files, folders or globs, relative to the incident file)", at)
		}
		for j, p := range r.Paths {
			if strings.TrimSpace(p) == "" {
				bad("%s.paths[%d]: empty", at, j)
				continue
			}
			s.Paths = append(s.Paths, resolve(dir, strings.TrimSpace(p)))
		}
		if s.Role == "" {
			s.Role = f.DefaultRole()
		}
		if s.Role == "" {
			bad("%s.role: missing (layout %s takes %s)", at, f.Name(), strings.Join(f.Roles, ", "))
		} else if err := f.CheckRole(s.Role); err != nil {
			bad("%s.role: %v", at, err)
		}
		if s.Model == "" && !f.HasModel() {
			bad("%s.model: missing (layout %s logs no model: name the model these logs served)", at, f.Name())
		}
		if s.Timezone != "" {
			if _, err := time.LoadLocation(s.Timezone); err != nil {
				bad("%s.timezone: %v", at, err)
			}
		}
		out = append(out, s)
	}
	return out
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
