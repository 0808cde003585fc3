package notify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The texts file is the same whether its shingles were sorted in memory or
// spilled in runs and merged (duplicates within and across runs dropped);
// every shingle added is found and no other; readTexts takes the file back
// and refuses one out of order, cut, grown or changed.
func TestTextSet(t *testing.T) {
	defer func(was int64) { runRelease = was }(runRelease)
	runRelease = 4096 // the runs' disk given back every few hundred shingles of the merge
	dir := t.TempDir()
	x := newHasher()
	r := rand.New(rand.NewPCG(3, 9))
	var in, out []digest
	for i := range 5000 {
		in = append(in, x.kgram([]string{"shingle", fmt.Sprint(i)}))
		out = append(out, x.kgram([]string{"absent", fmt.Sprint(i)}))
	}
	build := func(max int, path string) *textSet {
		b := textBuilder{dir: dir, max: max}
		for range 3 { // every shingle three times, in a random order
			for _, i := range r.Perm(len(in)) {
				b.add(in[i], uint64(i))
			}
		}
		// The runs' files, not b.runs, which the spiller writes: all but
		// the last run or two are on disk once add returns.
		if runs, _ := filepath.Glob(filepath.Join(dir, ".isolation-texts-run-*")); max > 0 && len(runs) < 10 {
			t.Fatalf("%d runs spilled, want many", len(runs))
		}
		ts, err := b.finish(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ts.close() })
		return ts
	}
	build(0, filepath.Join(dir, "mem"))
	spilled := build(700, filepath.Join(dir, textsName))
	a, _ := os.ReadFile(filepath.Join(dir, "mem"))
	b, _ := os.ReadFile(filepath.Join(dir, textsName))
	if !bytes.Equal(a, b) || len(a) != len(textsMagic)+16*len(in) {
		t.Fatalf("in memory %d bytes, spilled %d, want %d, equal", len(a), len(b), len(textsMagic)+16*len(in))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".isolation-texts-*")); len(left) != 0 {
		t.Fatalf("runs left behind: %v", left)
	}
	read, err := readTexts(filepath.Join(dir, textsName), spilled.n, spilled.sum)
	if err != nil {
		t.Fatal(err)
	}
	defer read.close()
	var buf []byte
	for name, ts := range map[string]*textSet{"built": spilled, "read": read} {
		for i := range in {
			if !ts.has(in[i], &buf) || !ts.mayHold(in[i]) {
				t.Fatalf("%s: shingle %d not found", name, i)
			}
			if ts.has(out[i], &buf) {
				t.Fatalf("%s: absent %d found", name, i)
			}
		}
		if err := ts.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range in {
		if !spilled.mayHaveQuick(uint64(i)) {
			t.Fatalf("cheap hash %d turned away", i)
		}
	}

	for name, tc := range map[string]struct {
		edit func([]byte) []byte
		want string
	}{
		"two shingles swapped": {func(f []byte) []byte {
			p := len(textsMagic) + 16*100
			s := bytes.Clone(f[p : p+16])
			copy(f[p:], f[p+16:p+32])
			copy(f[p+16:], s)
			return f
		}, "out of order"},
		"a byte changed":       {func(f []byte) []byte { f[len(f)-1] ^= 1; return f }, "SHA-256"},
		"the last shingle cut": {func(f []byte) []byte { return f[:len(f)-16] }, "records"},
		"a shingle added":      {func(f []byte) []byte { return append(f, f[len(f)-16:]...) }, "records"},
		"half a shingle added": {func(f []byte) []byte { return append(f, f[len(f)-8:]...) }, "records"},
		"another version":      {func(f []byte) []byte { f[len(textsMagic)-2] = '9'; return f }, "version"},
	} {
		p := filepath.Join(t.TempDir(), textsName)
		if err := os.WriteFile(p, tc.edit(bytes.Clone(b)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readTexts(p, spilled.n, spilled.sum); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
}

// sortUnique orders entries as a full sort does, with many in one bucket
// (the same top 16 bits), digests equal in their first half, and repeats.
func TestSortUnique(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var run []textEntry
	for range 20000 {
		e := textEntry{hi: uint64(r.IntN(4))<<48 | uint64(r.IntN(50)), lo: uint64(r.IntN(300)), q: 7}
		if r.IntN(3) == 0 {
			e.hi = r.Uint64()
		}
		run = append(run, e)
	}
	want := slices.Clone(run)
	slices.SortFunc(want, cmpEntry)
	want = slices.CompactFunc(want, func(a, b textEntry) bool { return a.hi == b.hi && a.lo == b.lo })
	got := sortUnique(run, make([]textEntry, len(run)))
	if !slices.Equal(got, want) {
		t.Fatalf("%d entries, want %d, or out of order", len(got), len(want))
	}
}

// countingReader counts the blocks read from a texts file, and fails them
// while fail is set.
type countingReader struct {
	r     io.ReaderAt
	reads int
	fail  bool
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	if c.fail {
		return 0, errors.New("a bad sector")
	}
	return c.r.ReadAt(p, off)
}

// TestTextsHaveRemembersMisses: a checker reads the texts file once for a
// k-gram it does not hold, every time for one it holds, and again after a
// read that failed (which proves nothing).
func TestTextsHaveRemembersMisses(t *testing.T) {
	dir := t.TempDir()
	x := newHasher()
	b := textBuilder{dir: dir}
	var in []digest
	for i := range 3000 {
		in = append(in, x.kgram([]string{"shingle", fmt.Sprint(i)}))
		b.add(in[i], uint64(i))
	}
	ts, err := b.finish(filepath.Join(dir, textsName))
	if err != nil {
		t.Fatal(err)
	}
	defer ts.close()
	cr := &countingReader{r: ts.r}
	ts.r = cr
	m := newManifest()
	m.texts = ts
	m.ids.seal()
	c := newCheckerQuick(m, false)

	absent := x.kgram([]string{"absent", "words"})
	for range 3 {
		if c.textsHave(absent) {
			t.Fatal("an absent k-gram found")
		}
	}
	if cr.reads != 1 {
		t.Errorf("an absent k-gram asked three times: %d reads, want 1", cr.reads)
	}
	cr.reads = 0
	for range 3 {
		if !c.textsHave(in[42]) {
			t.Fatal("a shingle not found")
		}
	}
	if cr.reads != 3 {
		t.Errorf("a shingle asked three times: %d reads, want 3", cr.reads)
	}
	// Many absent k-grams: each still answered right when the set of
	// misses has let it go.
	for i := range 20000 {
		if c.textsHave(x.kgram([]string{"absent", fmt.Sprint(i)})) {
			t.Fatalf("absent %d found", i)
		}
	}
	for _, d := range in[:500] {
		if !c.textsHave(d) {
			t.Fatal("a shingle not found after many misses")
		}
	}

	// A failed read is not remembered as a miss.
	other := x.kgram([]string{"other", "words"})
	cr.fail, cr.reads = true, 0
	c.textsHave(other)
	cr.fail = false
	ts.err = nil // as a new check would start
	c.textsHave(other)
	if cr.reads != 2 {
		t.Errorf("after a failed read: %d reads, want 2", cr.reads)
	}
}
