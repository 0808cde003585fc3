package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

const notifyFixture = `
INSERT INTO requests VALUES
 (1,'r-a1','2026-09-01T10:00:00Z','2026-09-01T10:00:05Z','t-alpha','glm-5.3',4000,100,200,'p1','d1','alpha secret words of the prompt here','ok',1,1,1),
 (2,'r-g1','2026-09-01T10:00:06Z','2026-09-01T10:00:09Z','t-gamma','glm-5.3',900000,20,200,'p1','d1',NULL,'alpha secret words of the prompt',2,1,2);
INSERT INTO affected_requests VALUES ('r-g1',2,'t-gamma','2026-09-01T10:00:06Z',NULL,'glm-5.3',900000,20,681280,'p1','d1',0);
INSERT INTO exposures VALUES ('r-a1','r-g1',1,2,'t-alpha','t-gamma','2026-09-01T10:00:00Z','2026-09-01T10:00:06Z','confirmed',1,false,'shingles=2');
INSERT INTO tenants VALUES
 ('t-alpha','source','confirmed',0,1,'2026-09-01T10:00:00Z','2026-09-01T10:00:00Z'),
 ('t-gamma','recipient','confirmed',1,0,'2026-09-01T10:00:06Z','2026-09-01T10:00:06Z');
`

type cliSession struct {
	mu   *sync.Mutex
	msgs *[]string
}

func (s cliSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s cliSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s cliSession) Data(r io.Reader) error {
	b, _ := io.ReadAll(r)
	s.mu.Lock()
	*s.msgs = append(*s.msgs, string(b))
	s.mu.Unlock()
	return nil
}
func (s cliSession) Reset()        {}
func (s cliSession) Logout() error { return nil }

func TestNotifyCommands(t *testing.T) {
	dir := t.TempDir()
	dbPath, incPath := sqlCase(t, dir, notifyFixture, `id: WAI-T
models: [glm-5.3]
window: {start: 2026-08-27T00:00:00Z, end: 2026-09-09T14:00:00Z}
aware_at: 2026-09-09T10:00:00Z
as_of: 2026-09-10T09:00:00Z
capacity: {prefill_pool_tokens: 681280, decode_pool_tokens: 3200000}
provider: {name: Example, email: notices@example.com, dpo_email: dpo@example.com, country: FR}
`)
	tenants := filepath.Join(dir, "tenants.csv")
	os.WriteFile(tenants, []byte("tenant_id,name,email,language,jurisdiction\nt-alpha,Alpha,a@alpha.example,en,FR\n"), 0o644)
	outbox := filepath.Join(dir, "outbox")

	code, out, errOut := runCLI(t, "notify", "draft", "--db", dbPath, "--incident", incPath, "--tenants", tenants, "--out", outbox)
	if code != 0 || !strings.Contains(out, "drafted 2 tenant notices") || !strings.Contains(out, "cannot_notify tenant-t-gamma.eml: not in the tenant directory") {
		t.Fatalf("draft: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "notify", "check", outbox); code != 0 || !strings.Contains(out, "checked 3 notices: 0 failed") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	// A leak planted by hand: exit 4, with the file and the reason.
	p := filepath.Join(outbox, "tenant-t-alpha.eml")
	raw, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(raw), "Dear Sir or Madam,", "Dear Sir or Madam, (cc t-gamma)", 1)), 0o644)
	if code, out, _ := runCLI(t, "notify", "check", outbox); code != 4 || !strings.Contains(out, "FAIL tenant-t-alpha.eml: text/plain part, word") {
		t.Fatalf("check of a leak: exit %d\n%s", code, out)
	}
	os.WriteFile(p, raw, 0o644)
	if code, out, _ := runCLI(t, "notify", "check", "--db", dbPath, outbox); code != 0 || !strings.Contains(out, "checked 3 notices: 0 failed") {
		t.Fatalf("check --db: exit %d\n%s", code, out)
	}
	// An outbox manifest emptied by hand: --db rebuilds it and says so.
	manifest := filepath.Join(outbox, "isolation.manifest")
	manRaw, _ := os.ReadFile(manifest)
	os.WriteFile(manifest, []byte("leakmap isolation manifest v3\nshingle 6\ntextks -\n"), 0o644)
	if code, out, _ := runCLI(t, "notify", "check", "--db", dbPath, outbox); code != 4 || !strings.Contains(out, "FAIL isolation.manifest: differs from the manifest rebuilt") {
		t.Fatalf("check --db of a tampered manifest: exit %d\n%s", code, out)
	}
	os.WriteFile(manifest, manRaw, 0o644)

	if code, out, _ := runCLI(t, "notify", "send", "--db", dbPath, "--outbox", outbox); code != 0 || !strings.Contains(out, "dry run: 2 notices would be sent") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}

	var mu sync.Mutex
	var msgs []string
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return cliSession{&mu, &msgs}, nil }))
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	host, port, _ := net.SplitHostPort(l.Addr().String())
	t.Setenv("LEAKMAP_SMTP_HOST", host)
	t.Setenv("LEAKMAP_SMTP_PORT", port)
	t.Setenv("LEAKMAP_SMTP_TLS", "none")
	if code, out, errOut := runCLI(t, "notify", "send", "--db", dbPath, "--outbox", outbox, "--send", "--rate", "0"); code != 0 || !strings.Contains(out, "sent 2, already accepted 0, failed 0") {
		t.Fatalf("send: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "notify", "send", "--db", dbPath, "--outbox", outbox, "--send"); code != 0 || !strings.Contains(out, "sent 0, already accepted 2") {
		t.Fatalf("resend: exit %d\n%s", code, out)
	}
	if len(msgs) != 2 {
		t.Fatalf("server got %d messages", len(msgs))
	}

	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("tenant_id,name\n"), 0o644)
	if code, _, errOut := runCLI(t, "notify", "draft", "--db", dbPath, "--incident", incPath, "--tenants", bad, "--out", outbox); code != 2 || !strings.Contains(errOut, "bad.csv:1") {
		t.Fatalf("bad directory: exit %d %s", code, errOut)
	}
}

// Custom wording in English only, with a French tenant and a French
// regulator notice: notify draft refuses it (exit 2), naming the language,
// the keys and which notices need them, and writes nothing. A title is
// written in the regulator's filing alone: only the regulator needs it.
func TestNotifyDraftRefusesMissingLanguage(t *testing.T) {
	for _, tc := range []struct{ name, notices, want string }{
		{"tenant keys", "notices:\n  consequences: Parts of prompts may have reached another customer.\n  measures_taken: [model withdrawn]\n",
			"notices.fr lacks consequences, measures_taken, needed by 1 tenant notice(s) and the regulator notice in fr"},
		{"title", "notices:\n  en: {title: Cross-tenant data in glm-5.3 responses}\n",
			"notices.fr lacks title, needed by the regulator notice in fr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dbPath, incPath := sqlCase(t, dir, notifyFixture, `id: WAI-T
models: [glm-5.3]
window: {start: 2026-08-27T00:00:00Z, end: 2026-09-09T14:00:00Z}
aware_at: 2026-09-09T10:00:00Z
as_of: 2026-09-10T09:00:00Z
capacity: {prefill_pool_tokens: 681280, decode_pool_tokens: 3200000}
provider: {name: Example, email: notices@example.com, dpo_email: dpo@example.com, country: FR}
`+tc.notices)
			tenants := filepath.Join(dir, "tenants.csv")
			os.WriteFile(tenants, []byte("tenant_id,name,email,language,jurisdiction\nt-alpha,Alpha,a@alpha.example,fr,FR\nt-gamma,Gamma,g@gamma.example,en,DE\n"), 0o644)
			outbox := filepath.Join(dir, "outbox")
			code, out, errOut := runCLI(t, "notify", "draft", "--db", dbPath, "--incident", incPath, "--tenants", tenants, "--out", outbox)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("draft: exit %d, want 2 and %q\n%s\n%s", code, tc.want, out, errOut)
			}
			if entries, _ := os.ReadDir(outbox); len(entries) != 0 {
				t.Errorf("a refused draft wrote %d files", len(entries))
			}
		})
	}
}
