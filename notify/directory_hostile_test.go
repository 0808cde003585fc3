package notify

import (
	"bytes"
	"context"
	"errors"
	"net/mail"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
)

// TestDirectoryAddressesParsed: display names are allowed and the parsed
// address is kept; a CR/LF in an address (header injection) stops the load
// with file, line and field.
func TestDirectoryAddressesParsed(t *testing.T) {
	d, err := ParseDirectory([]byte("tenant_id,name,email,language,jurisdiction\n"+
		"a,A,\"Alpha Ops <ops@a.example>; \"\"Legal, A\"\" <legal@a.example>\",en,FR\n"), "dir.csv")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Lookup("a").Emails, ";"); got != "ops@a.example;legal@a.example" {
		t.Errorf("emails %q", got)
	}
	for _, email := range []string{"\"ops@a.example\r\nBcc: all@evil.test\"", "\"ops@a.example\nBcc: all@evil.test\"", "\"Ops\r\n <ops@a.example>\""} {
		_, err := ParseDirectory([]byte("tenant_id,name,email,language,jurisdiction\nz,Z,ok@z.example,en,FR\na,A,"+email+",en,FR\n"), "dir.csv")
		if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "dir.csv:3: email:") {
			t.Errorf("%q: err = %v, want a usage error at dir.csv:3 naming email", email, err)
		}
	}
}

// TestDisplayNameAddressesInHeaders: "Data Protection Officer <dpo@...>" in
// the incident file and a display name in the directory give well-formed
// To headers and bare envelope recipients, not `<"Data Protection Officer
// <dpo"@...>>`.
func TestDisplayNameAddressesInHeaders(t *testing.T) {
	y := strings.Replace(testIncidentYAML, "dpo_email: dpo@inference.example", `dpo_email: "Data Protection Officer <dpo@inference.example>"`, 1)
	y = strings.Replace(y, "email: notices@inference.example", `email: "Notices <notices@inference.example>"`, 1)
	inc, err := incident.Parse([]byte(y), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	if _, err := db.Exec(fixtureSQL); err != nil {
		t.Fatal(err)
	}
	dirText := strings.Replace(fixtureDirectory, "ops@alpha.example;", "Alpha Ops <ops@alpha.example>;", 1)
	dir, err := ParseDirectory([]byte(dirText), "tenants.csv")
	if err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(t.TempDir(), "outbox")
	res, err := Draft(context.Background(), db, nil, inc, dir, outbox, testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	header := func(n IndexRow) mail.Header {
		msg, err := mail.ReadMessage(bytes.NewReader([]byte(readOutbox(t, outbox, n.File))))
		if err != nil {
			t.Fatal(err)
		}
		return msg.Header
	}
	for _, n := range res.Notices {
		switch {
		case n.Kind == "regulator":
			to, err := header(n).AddressList("To")
			if err != nil || len(to) != 1 || to[0].Address != "dpo@inference.example" || to[0].Name != "Data Protection Officer" {
				t.Errorf("regulator To: %v %v", to, err)
			}
			if n.Recipients != "dpo@inference.example" {
				t.Errorf("regulator recipients %q", n.Recipients)
			}
			from, err := header(n).AddressList("From")
			if err != nil || len(from) != 1 || from[0].Address != "notices@inference.example" {
				t.Errorf("From: %v %v", from, err)
			}
		case n.TenantID == "t-alpha":
			to, err := header(n).AddressList("To")
			if err != nil || len(to) != 2 || to[0].Address != "ops@alpha.example" || to[1].Address != "legal@alpha.example" {
				t.Errorf("alpha To: %v %v", to, err)
			}
			if n.Recipients != "ops@alpha.example;legal@alpha.example" {
				t.Errorf("alpha recipients %q", n.Recipients)
			}
		}
	}
}
