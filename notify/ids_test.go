package notify

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The identifier table finds every identifier with each of its owners and
// kinds, once however often it was added, and nothing else; a digest is
// generic for all its owners when it is for one; the manifest file's order
// (owner key, kind, digest) is kept.
//
// Past idRun records the table goes to disk (idspill.go): the same answers,
// from runs of 13 to 1000 records, and its files gone once closed.
func TestIDTable(t *testing.T) {
	defer func(was int64) { runRelease = was }(runRelease)
	runRelease = 4096 // the runs' disk given back as they are merged
	for _, run := range []int{0, 13, 128, 1000} {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			dir := t.TempDir()
			var tb idTable
			if run > 0 {
				defer func(was int) { idRun = was }(idRun)
				idRun, tb.dir = run, dir
			}
			testIDTable(t, &tb)
			if run > 0 && !tb.onDisk() {
				t.Fatal("the records stayed in memory")
			}
			tb.close()
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Fatalf("files left: %v", left)
			}
		})
	}
}

func testIDTable(t *testing.T, tb *idTable) {
	x := newHasher()
	var sc idScratch
	isGeneric := func(d digest) bool {
		r := tb.lookup(d, &sc)
		return len(r) > 0 && r[0].generic
	}
	type id struct {
		owner, kind string
		words       []string
	}
	var all []id
	for i := range 3000 {
		o := fmt.Sprintf("owner-%03d", i%97)
		all = append(all, id{o, "request_id", []string{"r", fmt.Sprint(i)}})
		if i%10 == 0 {
			all = append(all, id{o, "name", []string{"shared", fmt.Sprint(i % 7)}}) // one name, several owners
		}
	}
	for round := range 2 { // everything twice
		for _, e := range all {
			generic := round == 1 && e.kind == "name" && e.owner == "owner-000"
			if err := tb.add(e.owner, e.kind, len(e.words), x.kgram(e.words), generic, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tb.seal(); err != nil {
		t.Fatal(err)
	}
	want := map[digest][]string{}
	for _, e := range all {
		k := e.owner + "/" + e.kind
		d := x.kgram(e.words)
		if !slices.Contains(want[d], k) {
			want[d] = append(want[d], k)
		}
	}
	if tb.distinct != len(want) {
		t.Fatalf("%d distinct digests, want %d", tb.distinct, len(want))
	}
	for d, owners := range want {
		var got []string
		for _, r := range tb.lookup(d, &sc) {
			got = append(got, tb.owners[r.owner]+"/"+tb.kinds[r.kind])
		}
		slices.Sort(got)
		slices.Sort(owners)
		if !slices.Equal(got, owners) {
			t.Fatalf("%x: %v, want %v", d, got, owners)
		}
	}
	for i := range 1000 {
		if r := tb.lookup(x.kgram([]string{"absent", fmt.Sprint(i)}), &sc); len(r) > 0 {
			t.Fatalf("absent %d found: %v", i, r)
		}
	}
	for i := range 7 {
		d := x.kgram([]string{"shared", fmt.Sprint(i)})
		if !isGeneric(d) && i == 0 {
			t.Error("the name owner-000 marks generic is not generic for the others")
		}
	}
	if isGeneric(x.kgram([]string{"r", "5"})) {
		t.Error("a request id taken as generic")
	}
	if tb.generics == 0 {
		t.Error("no generic digest counted")
	}
	var got []idRec
	if err := tb.byOwner(func(r idRec) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	records := 0
	for _, owners := range want {
		records += len(owners)
	}
	if len(got) != records {
		t.Fatalf("byOwner: %d records, want %d", len(got), records)
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		ka := tb.owners[a.owner] + "\x00" + tb.kinds[a.kind] + "\x00" + string(a.d[:])
		kb := tb.owners[b.owner] + "\x00" + tb.kinds[b.kind] + "\x00" + string(b.d[:])
		if ka >= kb {
			t.Fatalf("byOwner out of order at %d", i)
		}
	}
	if tb.file != nil { // each owner's records, read alone
		var own []idRec
		for o := range tb.owners {
			var err error
			if own, err = tb.ownRecords(uint32(o), own); err != nil {
				t.Fatal(err)
			}
			var want []idRec
			for _, r := range got {
				if r.owner == uint32(o) {
					want = append(want, r)
				}
			}
			slices.SortFunc(want, func(a, b idRec) int { return cmpDigest(a.d, b.d) })
			if !slices.Equal(own, want) {
				t.Fatalf("owner %s: %d records read alone, want %d", tb.owners[o], len(own), len(want))
			}
		}
		if own, _ := tb.ownRecords(^uint32(0), own); len(own) != 0 {
			t.Fatalf("no owner: %d records", len(own))
		}
	}
	for _, r := range got {
		if r.generic != isGeneric(r.d) {
			t.Fatalf("byOwner: %x generic %v, its lookup says otherwise", r.d, r.generic)
		}
	}
}

// idModes runs f with the identifiers' table in memory, and on disk in
// runs of 3 records (idspill.go).
func idModes(t *testing.T, f func(t *testing.T)) {
	for _, run := range []int{0, 3} {
		t.Run(fmt.Sprintf("idRun %d", run), func(t *testing.T) {
			if run > 0 {
				defer func(was int) { idRun = was }(idRun)
				idRun = run
			}
			f(t)
		})
	}
}

// A draft whose identifiers went to disk writes the same outbox, byte for
// byte, as one that kept them in memory, leaves none of its files behind,
// and the outbox checked from its files with the table on disk passes.
func TestIdentifiersOnDiskDraftTheSameOutbox(t *testing.T) {
	db, dir := openFixture(t)
	inc := testIncident(t, "")
	mem, disk := filepath.Join(t.TempDir(), "mem"), filepath.Join(t.TempDir(), "disk")
	if _, err := Draft(context.Background(), db, nil, inc, dir, mem, testAsOf); err != nil {
		t.Fatal(err)
	}
	defer func(was int) { idRun = was }(idRun)
	idRun = 3
	if _, err := Draft(context.Background(), db, nil, inc, dir, disk, testAsOf); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadDir(mem)
	b, _ := os.ReadDir(disk)
	if len(a) < 9 || len(a) != len(b) {
		t.Fatalf("%d files in memory's outbox, %d in disk's", len(a), len(b))
	}
	for i, e := range a {
		x, _ := os.ReadFile(filepath.Join(mem, e.Name()))
		y, err := os.ReadFile(filepath.Join(disk, b[i].Name()))
		if err != nil || e.Name() != b[i].Name() || !bytes.Equal(x, y) {
			t.Errorf("%s differs", e.Name())
		}
	}
	got, err := Check(context.Background(), disk)
	if err != nil || len(got.Failures) != 0 {
		t.Fatalf("check: %v %+v", err, got)
	}
	if left, _ := os.ReadDir(disk); len(left) != len(b) {
		t.Errorf("%d files after the check, %d before", len(left), len(b))
	}
}

// A table's files go to the system's temporary directory when the
// outbox's refuses them (an outbox checked where it lies, read-only).
func TestCreateTempInFallsBack(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f, err := createTempIn(filepath.Join(t.TempDir(), "missing"), ".isolation-ids-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if filepath.Dir(f.Name()) != tmp {
		t.Fatalf("created %s, want it in %s", f.Name(), tmp)
	}
	dir := t.TempDir()
	if f, err = createTempIn(dir, ".isolation-ids-*"); err != nil || filepath.Dir(f.Name()) != dir {
		t.Fatalf("%v, %v: want a file in %s", f, err, dir)
	}
	f.Close()
}

// A draft stopped hard leaves its spilled files in the outbox: the next
// draft removes them, and nothing else hidden there.
func TestPrepareOutboxRemovesCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	left := []string{".isolation-texts-run-1", ".isolation-texts-draft", ".isolation-ids-run-2", ".isolation-ids-owners-3", ".isolation-ids-quick-4"}
	for _, n := range append(slices.Clone(left), ".keep") {
		writeFile(t, dir, n, "x")
	}
	if _, err := prepareOutbox(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != ".keep" {
		t.Fatalf("left: %v", entries)
	}
}

// A spill that fails (no folder can take the runs) is an error of the add
// that met it, of every add after it, and of the seal, and leaves no file.
func TestIDTableSpillFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("TMPDIR", missing)
	defer func(was int) { idRun = was }(idRun)
	idRun = 4
	tb := idTable{dir: missing, fromClear: true}
	x := newHasher()
	var errs int
	for i := range 10 {
		w := []string{"r", fmt.Sprint(i)}
		err := tb.add("owner", "request_id", 2, x.kgram(w), false, seqHashWords(w))
		if (err != nil) != (i >= idRun-1) {
			t.Fatalf("add %d: %v", i, err)
		}
		if err != nil {
			errs++
		}
	}
	if len(tb.recs) != idRun { // not appended to, nor sorted again
		t.Fatalf("%d records held after the failed spill", len(tb.recs))
	}
	if err := tb.seal(); err == nil || errs != 7 {
		t.Fatalf("seal: %v after %d failed adds", err, errs)
	}
	tb.close()
}
