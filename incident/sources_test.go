package incident

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
)

func TestSources(t *testing.T) {
	path := writeCase(t, validYAML+`sources:
  - layout: litellm-spendlogs
    paths: [gateway/*.csv.gz]
  - layout: sglang
    role: prefill
    model: glm-5.3
    timezone: Europe/Paris
    tenant_field: custom_labels.tenant
    paths: [engine/glm-5.3/prefill]
  - layout: gateway
    tenant: acct_1
    paths: [/abs/cf.json]
`)
	inc, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if len(inc.Sources) != 3 {
		t.Fatalf("%d sources", len(inc.Sources))
	}
	s := inc.Sources
	if s[0].Label != "sources[0]" || s[0].Role != "gateway" || s[0].Paths[0] != filepath.Join(dir, "gateway/*.csv.gz") {
		t.Errorf("sources[0] = %+v", s[0])
	}
	if s[1].Role != "prefill" || s[1].Model != "glm-5.3" || s[1].Timezone != "Europe/Paris" || s[1].TenantField != "custom_labels.tenant" ||
		s[1].Paths[0] != filepath.Join(dir, "engine/glm-5.3/prefill") {
		t.Errorf("sources[1] = %+v", s[1])
	}
	if s[2].Role != "gateway" || s[2].Tenant != "acct_1" || s[2].Paths[0] != "/abs/cf.json" {
		t.Errorf("sources[2] = %+v", s[2])
	}

	mapping := filepath.Join(dir, "team.yaml")
	os.WriteFile(mapping, []byte("extends: litellm-spendlogs\nfields:\n  tenant_id: end_user\n"), 0o644)
	if inc, err := Load(writeCaseIn(t, dir, validYAML+"sources:\n  - mapping: team.yaml\n    paths: [x.csv]\n")); err != nil || inc.Sources[0].Mapping != mapping || inc.Sources[0].Role != "gateway" {
		t.Errorf("mapping source: %v %+v", err, inc)
	}

	for _, tt := range []struct{ src, want string }{
		{"  - layout: sglang\n    model: m\n    paths: [x]\n", "sources[0].role: missing"},
		{"  - layout: sglang\n    role: decode\n    paths: [x]\n", "sources[0].model: missing"},
		{"  - layout: litellm-spendlogs\n", "sources[0].paths: missing"},
		{"  - paths: [x]\n", "sources[0].layout: missing"},
		{"  - layout: litellm-spendlogs\n    paths: [x]\n  - layout: nginx\n    paths: [x]\n", `sources[1].layout: unknown layout "nginx"`},
		{"  - layout: sglang\n    mapping: m.yaml\n    paths: [x]\n", "sources[0]: layout and mapping"},
		{"  - mapping: none.yaml\n    paths: [x]\n", "sources[0].mapping:"},
		{"  - layout: litellm-spendlogs\n    role: decode\n    paths: [x]\n", "sources[0].role:"},
		{"  - layout: sglang\n    role: decode\n    model: m\n    timezone: Mars/Olympus\n    paths: [x]\n", "sources[0].timezone:"},
		{"  - layout: sglang\n    role: decode\n    model: m\n    colour: red\n    paths: [x]\n", "colour"},
	} {
		_, err := Load(writeCase(t, validYAML+"sources:\n"+tt.src))
		if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want a usage error with %q", tt.src, err, tt.want)
		}
	}
}

// writeCaseIn writes another incident file into dir (beside its timeline).
func writeCaseIn(t *testing.T, dir, yamlText string) string {
	t.Helper()
	p := filepath.Join(dir, "incident2.yaml")
	if err := os.WriteFile(p, []byte(yamlText), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
