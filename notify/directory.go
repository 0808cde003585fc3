// Package notify drafts, checks and sends the notices a cross-tenant leak
// calls for: one per affected tenant (covering every role it has) and one
// for the regulator. Drafts are deterministic .eml files in an outbox; the
// isolation check proves from the outbox alone that no notice names another
// tenant or carries logged text; sending is resumable through a ledger in the
// case database.
package notify

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/bounded"
)

// Tenant is one row of the tenant directory.
type Tenant struct {
	ID           string
	Name         string
	Emails       []string // parsed addresses (bare, display name dropped), in file order
	Language     string   // en | fr
	Jurisdiction string
	// Problem says why the tenant cannot be notified ("" when it can).
	Problem string
}

// Directory is the tenant directory: who each tenant is and where to write.
type Directory struct {
	byID map[string]*Tenant
	ids  []string // sorted
}

// Lookup returns the tenant's entry, or nil when it is not in the directory.
func (d *Directory) Lookup(id string) *Tenant {
	if d == nil {
		return nil
	}
	return d.byID[id]
}

// IDs returns every tenant id of the directory, sorted.
func (d *Directory) IDs() []string { return d.ids }

// LoadDirectory reads the tenant directory CSV
// (tenant_id,name,email,language,jurisdiction). Structural problems (a
// missing column, a duplicate or empty tenant id, an unknown language, an
// address that does not parse) are errs.Usage errors naming file, line and
// field. An entry with no address at all is kept, with Problem set, so that
// its tenant is listed as "cannot notify".
// The file is read within bounded.MaxDirectoryBytes.
func LoadDirectory(path string) (*Directory, error) {
	data, err := bounded.ReadFile(path, bounded.MaxDirectoryBytes)
	if err != nil {
		return nil, errs.Usage("tenant directory: %w", err)
	}
	return ParseDirectory(data, filepath.Base(path))
}

// ParseDirectory parses directory CSV bytes; name prefixes line errors.
func ParseDirectory(data []byte, name string) (*Directory, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, errs.Usage("%s:1: header: %w", name, err)
	}
	want := []string{"tenant_id", "name", "email", "language", "jurisdiction"}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, w := range want {
		if _, ok := col[w]; !ok {
			return nil, errs.Usage("%s:1: missing column %q (want header %s)", name, w, strings.Join(want, ","))
		}
	}
	d := &Directory{byID: map[string]*Tenant{}}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, errs.Usage("%s: %w", name, err)
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		t := &Tenant{ID: get("tenant_id"), Name: get("name"), Language: strings.ToLower(get("language")), Jurisdiction: get("jurisdiction")}
		if t.ID == "" {
			return nil, errs.Usage("%s:%d: tenant_id: empty", name, line)
		}
		if _, dup := d.byID[t.ID]; dup {
			return nil, errs.Usage("%s:%d: tenant_id: %q listed twice", name, line, t.ID)
		}
		switch t.Language {
		case "en", "fr":
		case "":
			t.Language = "en"
		default:
			return nil, errs.Usage("%s:%d: language: %q is not en or fr", name, line, t.Language)
		}
		// Addresses are parsed as the incident file's are (net/mail, display
		// names allowed); what the notices use is the parsed address. One
		// that does not parse stops the load (exit 2, file, line and field):
		// a notice silently sent to fewer addresses than the directory names
		// is worse than a typo fixed before drafting. An entry with no
		// address at all is a known gap, listed as "cannot notify".
		for _, a := range strings.Split(get("email"), ";") {
			a = strings.TrimSpace(a)
			if a == "" {
				continue
			}
			if strings.ContainsFunc(a, unicode.IsControl) {
				return nil, errs.Usage("%s:%d: email: %q holds a control character (a line break would inject a header)", name, line, a)
			}
			addr, err := incident.ParseAddress(a)
			if err != nil {
				return nil, errs.Usage("%s:%d: email: tenant %q: %w", name, line, t.ID, err)
			}
			t.Emails = append(t.Emails, addr.Address)
		}
		if len(t.Emails) == 0 {
			t.Problem = fmt.Sprintf("no email address in the directory (%s:%d)", name, line)
		}
		d.byID[t.ID] = t
		d.ids = append(d.ids, t.ID)
	}
	sort.Strings(d.ids)
	return d, nil
}
