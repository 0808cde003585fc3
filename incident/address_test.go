package incident

import (
	"errors"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/errs"
)

// TestProviderAddresses: the common display-name form loads as its parsed
// parts; a CR/LF (header injection) or a non-address stops the load naming
// the field.
func TestProviderAddresses(t *testing.T) {
	base := "dpo_email: dpo@example.net"
	ok := map[string][2]string{
		`dpo_email: "Data Protection Officer <dpo@example.net>"`: {"dpo@example.net", "Data Protection Officer"},
		`dpo_email: dpo@example.net`:                             {"dpo@example.net", ""},
		`dpo_email: "\"DPO, Example\" <dpo@example.net>"`:        {"dpo@example.net", "DPO, Example"},
	}
	for line, want := range ok {
		inc, err := Load(writeCase(t, strings.Replace(validYAML, base, line, 1)))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if inc.Provider.DPOEmail != want[0] || inc.Provider.DPOName != want[1] {
			t.Errorf("%s: parsed %q %q, want %q %q", line, inc.Provider.DPOEmail, inc.Provider.DPOName, want[0], want[1])
		}
		if c := inc.Provider.Contact(); c.Address != want[0] {
			t.Errorf("%s: contact %v", line, c)
		}
	}
	for _, c := range []struct{ line, key string }{
		{`dpo_email: "dpo@example.net\r\nBcc: all@evil.test"`, "provider.dpo_email"},
		{`dpo_email: "dpo@example.net\nBcc: all@evil.test"`, "provider.dpo_email"},
		{`dpo_email: "Data Protection Officer <dpo"`, "provider.dpo_email"},
		{`dpo_email: dpo@localhost`, "provider.dpo_email"},
		{`dpo_email: "a@example.net, b@example.net"`, "provider.dpo_email"},
		{`email: security@example.net`, ""}, // placeholder, replaced below
	} {
		if c.key == "" {
			continue
		}
		_, err := Load(writeCase(t, strings.Replace(validYAML, base, c.line, 1)))
		if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), c.key+":") {
			t.Errorf("%s: err = %v, want a usage error naming %s", c.line, err, c.key)
		}
	}
	_, err := Load(writeCase(t, strings.Replace(validYAML, "email: security@example.net", `email: "security@example.net\r\nX-Evil: 1"`, 1)))
	if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "provider.email:") {
		t.Errorf("CR/LF in provider.email: err = %v", err)
	}
}
