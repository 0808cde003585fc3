package notify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
)

func TestParseDirectory(t *testing.T) {
	d, err := ParseDirectory([]byte("tenant_id,name,email,language,jurisdiction\n"+
		"a,A,x@a.example; y@a.example ,FR,FR\n"+
		"b,B,,en,DE\n"+
		"c,C,nope;z@c.example,,US\n"+
		"d,D,broken@;also broken,fr,FR\n"), "dir.csv")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, lang, emails, invalid, problem string
	}{
		{"a", "fr", "x@a.example;y@a.example", "", ""},
		{"b", "en", "", "", "no email address in the directory (dir.csv:3)"},
		{"c", "en", "z@c.example", "nope", ""},
		{"d", "fr", "", "broken@;also broken", "no valid email address in the directory (dir.csv:5)"},
	}
	for _, tt := range tests {
		e := d.Lookup(tt.id)
		if e == nil {
			t.Fatalf("%s missing", tt.id)
		}
		got := []string{e.Language, strings.Join(e.Emails, ";"), strings.Join(e.Invalid, ";"), e.Problem}
		want := []string{tt.lang, tt.emails, tt.invalid, tt.problem}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", tt.id, got, want)
		}
	}
	if d.Lookup("zz") != nil {
		t.Error("unknown tenant found")
	}
}

func TestParseDirectoryErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"missing column", "tenant_id,name,email,language\n", "dir.csv:1: missing column \"jurisdiction\""},
		{"duplicate", "tenant_id,name,email,language,jurisdiction\na,A,a@x.example,en,FR\na,A,a@x.example,en,FR\n", "dir.csv:3: tenant_id: \"a\" listed twice"},
		{"empty id", "tenant_id,name,email,language,jurisdiction\n,A,a@x.example,en,FR\n", "dir.csv:2: tenant_id: empty"},
		{"language", "tenant_id,name,email,language,jurisdiction\na,A,a@x.example,de,FR\n", "dir.csv:2: language: \"de\" is not en or fr"},
		{"bad quoting", "tenant_id,name,email,language,jurisdiction\na,\"A,a@x.example,en,FR\n", "dir.csv"},
	}
	for _, tt := range tests {
		_, err := ParseDirectory([]byte(tt.data), "dir.csv")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, errs.ErrUsage) {
			t.Errorf("%s: got %v, want usage error with %q", tt.name, err, tt.want)
		}
	}
	p := filepath.Join(t.TempDir(), "tenants.csv")
	os.WriteFile(p, []byte("tenant_id,name\n"), 0o644)
	if _, err := LoadDirectory(p); errs.ExitCode(err) != 2 || !strings.Contains(err.Error(), "tenants.csv:1") {
		t.Errorf("LoadDirectory: %v", err)
	}
}
