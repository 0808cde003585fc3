package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The outbox's manifest is edited to forget t-alpha's identifiers, and
// gamma's notice names t-alpha. The check from
// the outbox alone is fooled; with the case database it is not.
func TestCheckCaseRebuildsManifest(t *testing.T) {
	db, res := draftFixture(t)
	ctx := context.Background()
	if got, err := CheckCase(ctx, db, res.Outbox); err != nil || len(got.Failures) != 0 || got.Checked != len(res.Notices) {
		t.Fatalf("clean outbox: %+v %v", got, err)
	}
	gamma := noticeFor(t, res, "t-gamma").File
	writeFile(t, res.Outbox, gamma, string(rebuild(t, readOutbox(t, res.Outbox, gamma), func(p *parsedMail) { p.text += "\nsee T-Alpha and r-a1\n" })))
	manPath := filepath.Join(res.Outbox, manifestName)
	man, err := os.ReadFile(manPath)
	if err != nil {
		t.Fatal(err)
	}
	alpha := ownerKey("t-alpha")
	var kept []string
	for _, line := range strings.Split(strings.TrimSuffix(string(man), "\n"), "\n") {
		if strings.HasPrefix(line, "id "+alpha+" ") {
			continue
		}
		kept = append(kept, line)
	}
	if len(kept) >= len(strings.Split(string(man), "\n"))-1 {
		t.Fatal("the tampering removed nothing")
	}
	writeFile(t, res.Outbox, manifestName, strings.Join(kept, "\n")+"\n")

	fooled, err := Check(context.Background(), res.Outbox)
	if err != nil {
		t.Fatal(err)
	}
	if len(fooled.Failures) != 0 {
		t.Fatalf("the outbox-only check was expected to be fooled by its own manifest: %+v", fooled.Failures)
	}
	got, err := CheckCase(ctx, db, res.Outbox)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, f := range got.Failures {
		reasons[f.File] = f.Reason
	}
	if len(got.Failures) != 2 || !strings.Contains(reasons[gamma], "another tenant's tenant id") || !strings.Contains(reasons[manifestName], "differs") {
		t.Fatalf("with the case: %+v", got.Failures)
	}
	// Without the manifest at all, the case still checks every notice.
	os.Remove(manPath)
	if got, err := CheckCase(ctx, db, res.Outbox); err != nil || len(got.Failures) != 2 {
		t.Fatalf("no manifest: %+v %v", got, err)
	}
}

// A case drafted before notice_identities existed cannot be rebuilt: an
// error, never a weaker check.
func TestCheckCaseNeedsIdentities(t *testing.T) {
	db, res := draftFixture(t)
	if _, err := db.Exec(`DELETE FROM notice_identities`); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckCase(context.Background(), db, res.Outbox); err == nil || !strings.Contains(err.Error(), "redraft") {
		t.Fatalf("got %v", err)
	}
}

// TestSameAsWritten: the rebuilt manifest is compared with the written one
// piece by piece; any byte changed, added or taken away differs.
func TestSameAsWritten(t *testing.T) {
	m := newManifest()
	x := newHasher()
	for i := range 3000 { // more than one of writeTo's 64 KiB pieces
		m.addIdentifier(x, fmt.Sprintf("t-%04d", i), "request_id", fmt.Sprintf("r-%04d-a", i))
	}
	m.addText(x, "the quarterly figures of the northern unit were revised twice before the audit")
	path := filepath.Join(t.TempDir(), manifestName)
	if err := m.sealTexts(filepath.Join(filepath.Dir(path), textsName)); err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if err := m.write(path); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil || len(good) < 1<<17 {
		t.Fatalf("manifest of %d bytes (%v): too small to span pieces", len(good), err)
	}
	if !sameAsWritten(path, m) {
		t.Fatal("the manifest as written differs from itself")
	}
	for name, bad := range map[string][]byte{
		"a byte changed in the middle": func() []byte { b := slices.Clone(good); b[len(b)/2] ^= 1; return b }(),
		"the last byte changed":        func() []byte { b := slices.Clone(good); b[len(b)-1] = 'x'; return b }(),
		"a byte added":                 append(slices.Clone(good), '\n'),
		"the last byte taken away":     good[:len(good)-1],
		"empty":                        nil,
	} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if sameAsWritten(path, m) {
			t.Errorf("%s: taken as the same", name)
		}
	}
	if sameAsWritten(filepath.Join(t.TempDir(), "none"), m) {
		t.Error("a missing manifest taken as the same")
	}
}

// sameFiles: equal files of more than one piece are the same; a byte
// changed, added or taken away on either side, or a file missing, is not.
func TestSameFiles(t *testing.T) {
	dir := t.TempDir()
	good := make([]byte, 3<<20+17)
	for i := range good {
		good[i] = byte(i * 7)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", good)
	for name, tc := range map[string]struct {
		b    []byte
		same bool
	}{
		"equal":                     {slices.Clone(good), true},
		"a byte changed at the end": {func() []byte { b := slices.Clone(good); b[len(b)-1]++; return b }(), false},
		"a byte changed early":      {func() []byte { b := slices.Clone(good); b[5]++; return b }(), false},
		"longer":                    {append(slices.Clone(good), 0), false},
		"shorter":                   {good[:len(good)-1], false},
		"empty":                     {nil, false},
	} {
		b := write("b", tc.b)
		if got := sameFiles(a, b); got != tc.same {
			t.Errorf("%s: sameFiles %v", name, got)
		}
		if got := sameFiles(b, a); got != tc.same {
			t.Errorf("%s, the other way: sameFiles %v", name, got)
		}
	}
	if sameFiles(a, filepath.Join(dir, "missing")) || sameFiles(filepath.Join(dir, "missing"), a) {
		t.Error("a missing file is the same as one that exists")
	}
}

// readManifest reads the texts file beside the manifest while it reads the
// manifest: a manifest that reads well with a damaged texts file is
// refused for the texts file, and a damaged manifest for itself (not for
// its texts file, damaged too), and either way no file is left open.
func TestReadManifestWithItsTexts(t *testing.T) {
	dir := t.TempDir()
	m := newManifest()
	x := newHasher()
	for i := range 500 {
		m.addIdentifier(x, fmt.Sprintf("t-%04d", i), "request_id", fmt.Sprintf("r-%04d-a", i))
		m.addText(x, fmt.Sprintf("the quarterly figures of unit %d were revised twice before the audit of %d", i, i*7))
	}
	path := filepath.Join(dir, manifestName)
	if err := m.sealTexts(filepath.Join(dir, textsName)); err != nil {
		t.Fatal(err)
	}
	if err := m.write(path); err != nil {
		t.Fatal(err)
	}
	m.close()
	read, err := readManifest(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if read.texts.n != m.texts.n || read.ids.distinct != m.ids.distinct {
		t.Fatalf("read %d shingles and %d identifiers, wrote %d and %d", read.texts.n, read.ids.distinct, m.texts.n, m.ids.distinct)
	}
	read.close()
	texts, _ := os.ReadFile(filepath.Join(dir, textsName))
	manifest, _ := os.ReadFile(path)
	damage := func(name string, b []byte, at int) {
		b = slices.Clone(b)
		b[at] ^= 1
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	damage(textsName, texts, len(texts)-1)
	if _, err := readManifest(context.Background(), path); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("texts file damaged: %v", err)
	}
	damage(manifestName, manifest, 3)
	if _, err := readManifest(context.Background(), path); err == nil || !strings.Contains(err.Error(), manifestName+":1:") {
		t.Fatalf("manifest and texts file damaged: %v, want the manifest's first line", err)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); strings.HasPrefix(target, dir) {
				t.Errorf("%s left open", target)
			}
		}
	}
}

// A check canceled stops and says so, before the manifest is read or while
// the notices are: at 100M requests it takes minutes, and Ctrl-C is how a
// responder stops it.
func TestCheckStopsWhenCanceled(t *testing.T) {
	_, res := draftFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := Check(ctx, res.Outbox); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled before: %+v, %v", got, err)
	}
	m, err := readManifest(context.Background(), filepath.Join(res.Outbox, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if got, err := checkOutbox(ctx, res.Outbox, m); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled while checking: %+v, %v", got, err)
	}
}
