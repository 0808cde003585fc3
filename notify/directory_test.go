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
		"c,C, ; z@c.example;,,US\n"), "dir.csv")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, lang, emails, problem string
	}{
		{"a", "fr", "x@a.example;y@a.example", ""},
		{"b", "en", "", "no email address in the directory (dir.csv:3)"},
		{"c", "en", "z@c.example", ""},
	}
	for _, tt := range tests {
		e := d.Lookup(tt.id)
		if e == nil {
			t.Fatalf("%s missing", tt.id)
		}
		got := []string{e.Language, strings.Join(e.Emails, ";"), e.Problem}
		want := []string{tt.lang, tt.emails, tt.problem}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", tt.id, got, want)
		}
	}
	if d.Lookup("zz") != nil {
		t.Error("unknown tenant found")
	}
}

// TestDirectoryBadAddressRefused: an address that does not parse refuses the
// directory (exit 2) naming file, line and field, even beside a good address
// of the same tenant: the rule is that anything net/mail does not
// accept is refused at load, never dropped in silence.
func TestDirectoryBadAddressRefused(t *testing.T) {
	for _, email := range []string{"nope;z@c.example", "broken@;also broken", "ops at c.example", "z@localhost", "<>"} {
		data := "tenant_id,name,email,language,jurisdiction\na,A,a@a.example,en,FR\nc,C," + email + ",en,FR\n"
		_, err := ParseDirectory([]byte(data), "dir.csv")
		if errs.ExitCode(err) != 2 || !strings.Contains(err.Error(), "dir.csv:3: email:") || !strings.Contains(err.Error(), `"c"`) {
			t.Errorf("%q: err = %v, want exit 2 naming dir.csv:3, email and tenant \"c\"", email, err)
		}
	}
	p := filepath.Join(t.TempDir(), "tenants.csv")
	os.WriteFile(p, []byte("tenant_id,name,email,language,jurisdiction\na,A,Alpha <a@a.example>,en,FR\nb,B,b(at)b.example,en,FR\n"), 0o644)
	if _, err := LoadDirectory(p); errs.ExitCode(err) != 2 || !strings.Contains(err.Error(), "tenants.csv:3: email:") {
		t.Errorf("LoadDirectory: %v", err)
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
