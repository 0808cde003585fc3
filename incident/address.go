package incident

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
)

// ParseAddress parses one email address as a notice's headers and the SMTP
// envelope need it: net/mail syntax, a display name allowed ("Data
// Protection Officer <dpo@example.com>"), no control character (a CR or LF
// would begin a header line of its own), a domain with a dot. What later
// code writes is the parsed form, never the raw text.
func ParseAddress(s string) (*mail.Address, error) {
	s = strings.TrimSpace(s)
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, errors.New("contains a control character (a line break would inject a header)")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an email address (%v)", s, err)
	}
	at := strings.LastIndex(a.Address, "@")
	if at < 1 || !strings.Contains(a.Address[at+1:], ".") {
		return nil, fmt.Errorf("%q is not an email address with a domain", s)
	}
	return a, nil
}

// parseProvider fills the provider's addresses with their parsed forms.
func parseProvider(p *Provider, bad func(format string, a ...any)) {
	for _, f := range []struct {
		field      string
		addr, name *string
	}{
		{"provider.email", &p.Email, &p.EmailName},
		{"provider.dpo_email", &p.DPOEmail, &p.DPOName},
	} {
		if strings.TrimSpace(*f.addr) == "" {
			*f.addr = ""
			continue
		}
		a, err := ParseAddress(*f.addr)
		if err != nil {
			bad("%s: %v", f.field, err)
			continue
		}
		*f.addr, *f.name = a.Address, a.Name
	}
}

// Contact is the address the regulator notice goes to and tenants are told
// to write to: the DPO, else the provider's email.
func (p Provider) Contact() mail.Address {
	if p.DPOEmail != "" {
		return mail.Address{Name: p.DPOName, Address: p.DPOEmail}
	}
	return mail.Address{Name: p.EmailName, Address: p.Email}
}
