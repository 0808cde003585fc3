package notify

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDraftStatusesAndRoles(t *testing.T) {
	db, res := draftFixture(t)
	want := map[string]struct{ roles, status, lang string }{
		"t-alpha": {"source", StatusReady, "en"},
		"t-beta":  {"source", StatusReady, "fr"},
		"t-delta": {"both", StatusReady, "en"},
		"t-eps":   {"self", StatusReady, "fr"},
		"t-eta":   {"source", StatusCannotNotify, "en"},
		"t-gamma": {"recipient", StatusReady, "en"},
		"t-zeta":  {"recipient", StatusCannotNotify, "en"},
		"":        {"regulator", StatusReady, "fr"},
	}
	if got := len(res.Notices); got != len(want) {
		t.Fatalf("got %d notices, want %d", got, len(want))
	}
	for tenant, w := range want {
		n := noticeFor(t, res, tenant)
		if n.Roles != w.roles || n.Status != w.status || n.Language != w.lang {
			t.Errorf("%s: got roles=%s status=%s lang=%s (%s), want %+v", tenant, n.Roles, n.Status, n.Language, n.Reason, w)
		}
	}
	if r := noticeFor(t, res, "t-zeta").Reason; r != "not in the tenant directory" {
		t.Errorf("zeta reason %q", r)
	}
	if r := noticeFor(t, res, "t-eta").Reason; r == "" {
		t.Error("eta: cannot notify without a reason")
	}
	if res.Drafted != 8 || res.Ready != 6 || res.CannotNotify != 2 || res.Blocked != 0 {
		t.Errorf("counts: %+v", res)
	}
	// The notices table mirrors index.csv.
	var n, cannot int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status = 'cannot_notify') FROM notices`).Scan(&n, &cannot); err != nil {
		t.Fatal(err)
	}
	if n != 8 || cannot != 2 {
		t.Errorf("notices table: %d rows, %d cannot_notify", n, cannot)
	}
	idx := readOutbox(t, res.Outbox, IndexName)
	mustContain(t, "index.csv", idx, "file,notice_id,kind,tenant_id,roles,language,recipients,status,reason",
		"tenant-t-zeta.eml,WAI-2026-0908/tenant/t-zeta,tenant,t-zeta,recipient,en,,cannot_notify,not in the tenant directory")
	if len(res.Check.Failures) != 0 {
		t.Errorf("isolation check failures on a clean draft: %+v", res.Check.Failures)
	}
}

func TestDraftIsDeterministic(t *testing.T) {
	db, dir := openFixture(t)
	inc := testIncident(t, "")
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, out := range []string{a, b, a} { // a twice: a redraft over an old outbox
		if _, err := Draft(context.Background(), db, nil, inc, dir, out, testAsOf); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(a)
	if len(entries) < 9 {
		t.Fatalf("only %d files", len(entries))
	}
	for _, e := range entries {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between runs", e.Name())
		}
	}
}

// TestRedraftOverwritesInPlace: a redraft over an earlier outbox leaves
// exactly a fresh draft's files, writes the notices it keeps into the same
// files (no new inodes: see prepareOutbox), removes a notice of a tenant no
// longer in the case, never writes through a link, and leaves files and
// folders that are not the draft's alone.
func TestRedraftOverwritesInPlace(t *testing.T) {
	db, dir := openFixture(t)
	inc := testIncident(t, "")
	fresh, out := filepath.Join(t.TempDir(), "fresh"), filepath.Join(t.TempDir(), "out")
	for _, o := range []string{fresh, out} {
		if _, err := Draft(context.Background(), db, nil, inc, dir, o, testAsOf); err != nil {
			t.Fatal(err)
		}
	}
	kept := filepath.Join(out, "tenant-t-gamma.eml")
	before, err := os.Stat(kept)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("an older notice, longer than nothing"), 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("not the draft's"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(out, "tenant-t-alpha.eml")
	if err := os.Remove(linked); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, linked); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"tenant-t-gone.eml": "a tenant no longer in the case", "notes.txt": "the responder's"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(out, "archive.eml"), 0o755); err != nil {
		t.Fatal(err)
	}

	if _, err := Draft(context.Background(), db, nil, inc, dir, out, testAsOf); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(kept)
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("%s: not overwritten in place (%v)", kept, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "not the draft's" {
		t.Errorf("the draft wrote through a link: the file outside the outbox now holds %d bytes", len(b))
	}
	if fi, err := os.Lstat(linked); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: want a regular file (%v)", linked, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(b) != "the responder's" {
		t.Errorf("notes.txt: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(out, "archive.eml")); err != nil || !fi.IsDir() {
		t.Errorf("archive.eml: want the folder kept (%v)", err)
	}
	want, _ := os.ReadDir(fresh)
	got, _ := os.ReadDir(out)
	var names []string
	for _, e := range got {
		if n := e.Name(); n != "notes.txt" && n != "archive.eml" {
			names = append(names, n)
		}
	}
	if len(names) != len(want) {
		t.Errorf("files after the redraft %v, want those of a fresh draft (%d)", names, len(want))
	}
	for _, e := range want {
		x, _ := os.ReadFile(filepath.Join(fresh, e.Name()))
		y, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs from a fresh draft's (%v)", e.Name(), err)
		}
	}
}

func TestSelfOnlyNoticeHasNoCrossTenantWording(t *testing.T) {
	_, res := draftFixture(t)
	eps := noticeFor(t, res, "t-eps")
	parts := decodeForTest(t, readOutbox(t, res.Outbox, eps.File))
	for _, p := range []string{parts.subject, parts.text, parts.html} {
		mustNotContain(t, "self-only notice", p, "autre client", "autres clients", "another customer", "other customer")
	}
	mustContain(t, "self-only notice", parts.text, "vos propres requêtes antérieures")
	// Its attachment lists its triggers only.
	mustContain(t, "self-only attachment", parts.attachment, "r-e2,2026-09-02T08:00:05Z,touchée,aucun,oui")
	mustNotContain(t, "self-only attachment", parts.attachment, "r-e1")
}

func TestAttachmentHoldsOwnRequestsOnly(t *testing.T) {
	_, res := draftFixture(t)
	tests := []struct {
		tenant string
		want   []string
		not    []string
	}{
		{"t-gamma", []string{"r-g1,2026-09-01T10:00:06Z,affected,confirmed,no", "r-g2,2026-09-01T11:00:06Z,affected,probable,no"}, []string{"r-a1", "r-b1", "r-d1", "exposed"}},
		{"t-delta", []string{"r-d9,2026-09-01T11:00:05Z,affected,confirmed,no", "r-d1,2026-09-01T11:00:00Z,exposed,probable,\n"}, []string{"r-b1", "r-g2"}},
		{"t-alpha", []string{"r-a1,2026-09-01T10:00:00Z,exposed,confirmed,\n"}, []string{"r-g1", "affected"}},
	}
	for _, tt := range tests {
		p := decodeForTest(t, readOutbox(t, res.Outbox, noticeFor(t, res, tt.tenant).File))
		mustContain(t, tt.tenant+" attachment", p.attachment, tt.want...)
		mustNotContain(t, tt.tenant+" attachment", p.attachment, tt.not...)
	}
}

func TestRegulatorNoticeHasNoTenant(t *testing.T) {
	_, res := draftFixture(t)
	raw := readOutbox(t, res.Outbox, noticeFor(t, res, "").File)
	p := decodeForTest(t, raw)
	for _, s := range []string{raw, p.text, p.html} {
		mustNotContain(t, "regulator notice", s, "t-alpha", "t-gamma", "alpha analytics", "gamma", "r-g1", "r-a1", "ops@alpha", "merger")
	}
}

func TestTenantFileNames(t *testing.T) {
	tests := []struct{ id, want string }{
		{"t-alpha", "tenant-t-alpha.eml"},
		{"T-Alpha", "tenant-t-alpha-"},
		{"a/b c", "tenant-a_b_c-"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := tenantFile(tt.id)
		if !strings.HasPrefix(got, tt.want) || seen[got] {
			t.Errorf("tenantFile(%q) = %q, want prefix %q and unique", tt.id, got, tt.want)
		}
		seen[got] = true
	}
	if tenantFile("T-Alpha") == tenantFile("t-alpha") {
		t.Error("ids differing in case share a file")
	}
}

// TestWriteOver: a notice written over an earlier draft's file holds the new
// bytes alone, whether they are shorter, as long or longer, and whether
// the draft knew of the file (fresh false) or not (a file that appeared
// after the outbox was listed).
func TestWriteOver(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "tenant-t-a.eml")
		for _, content := range []string{"", "a first draft", "longer: a second draft", "shorter", "shorter", "", "x"} {
			if err := writeOver(path, []byte(content), fresh); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != content {
				t.Errorf("fresh %v: after writing %q the file holds %q (%v)", fresh, content, b, err)
			}
		}
		// An error names the file, as the os package's do.
		missing := filepath.Join(t.TempDir(), "gone", "tenant-t-a.eml")
		err := writeOver(missing, []byte("x"), fresh)
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Path != missing || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fresh %v: writing into a missing folder: %v", fresh, err)
		}
	}
}

// TestWriteOverReadOnly: an earlier notice made read-only is replaced, as
// the draft that removed the earlier files first did. Root writes into it
// anyway, so the case is tried only as another user.
func TestWriteOverReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write into a read-only file")
	}
	path := filepath.Join(t.TempDir(), "tenant-t-a.eml")
	if err := os.WriteFile(path, []byte("older"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := writeOver(path, []byte("newer"), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "newer" {
		t.Errorf("got %q", b)
	}
}
