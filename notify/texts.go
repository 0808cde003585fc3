package notify

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// The logged texts' shingles are the bulk of an isolation manifest: 37
// million at 10M requests, and growing with the texts the analysis names.
// Held in a Go map they were most of the draft's memory (7.4 GB at 10M).
// They live in a file of their own beside the manifest, isolation.texts:
// the digests sorted, 16 bytes each, read by the check one block of
// textBlock digests at a time. In memory stay a sparse index (one digest
// per block) and one Bloom filter of bounded size, which turns away almost
// every k-gram of a notice before any block is read. The file is sorted
// with runs of bounded size spilled next to it, so building it is bounded
// too.

const (
	textsName  = "isolation.texts"
	textsMagic = "leakmap isolation texts v1\n"
	textBlock  = 256 // digests per block read: 4 KiB
	// textRun is the entries a builder sorts in memory before it spills
	// them to a run file (24 bytes each: 48 MiB).
	textRun = 1 << 21
	// bloomMaxBits bounds a text filter: 512 MiB. Sized at 16 bits a
	// shingle below it (about 1 false "maybe" in 400); a case with more
	// than 2^28 shingles gets more false "maybe"s, each a block read,
	// not more memory.
	bloomMaxBits = 1 << 32
)

// bloom is a blocked Bloom filter: three bits in one 64-bit word per hash.
type bloom struct {
	words []uint64
	shift uint
}

func newBloom(n int64) *bloom {
	size := uint64(1 << 12)
	for size < uint64(n)*16 && size < bloomMaxBits {
		size <<= 1
	}
	words := size / 64
	return &bloom{words: make([]uint64, words), shift: uint(64 - bits.Len64(words-1))}
}

func (b *bloom) add(h uint64) { b.words[h>>b.shift] |= bloomBits(h) }

func (b *bloom) mayHave(h uint64) bool {
	bb := bloomBits(h)
	return b.words[h>>b.shift]&bb == bb
}

// bloomFiller adds hashes to a filter on a goroutine of its own, in
// batches. The texts file is written in the digests' order, and their
// cheap hashes come in random order: each a cache miss in a filter of up
// to 512 MiB, a tenth of a 10M draft's CPU on the core that also merges
// the runs and writes the file, while the other had nothing to do. The
// filter is the same in any order (bits are only set); wait returns once
// every hash is in.
type bloomFiller struct {
	batches, free chan []uint64
	done          chan struct{}
	cur           []uint64
}

const bloomBatch = 1 << 15

func newBloomFiller(b *bloom) *bloomFiller {
	f := &bloomFiller{batches: make(chan []uint64, 2), free: make(chan []uint64, 3), done: make(chan struct{})}
	for range 2 {
		f.free <- make([]uint64, 0, bloomBatch)
	}
	f.cur = make([]uint64, 0, bloomBatch)
	go func() {
		defer close(f.done)
		for batch := range f.batches {
			for _, h := range batch {
				b.add(h)
			}
			f.free <- batch[:0]
		}
	}()
	return f
}

func (f *bloomFiller) add(h uint64) {
	f.cur = append(f.cur, h)
	if len(f.cur) == bloomBatch {
		f.batches <- f.cur
		f.cur = <-f.free
	}
}

// wait adds what is left and waits for the goroutine; once only.
func (f *bloomFiller) wait() {
	if f.batches == nil {
		return
	}
	f.batches <- f.cur
	close(f.batches)
	<-f.done
	f.batches, f.cur = nil, nil
}

// digestKey is a digest's key in a filter: its first bytes, which pick the
// filter's word, so that the digests, sorted in the texts file and the
// identifiers' table, fill the filter in order: one pass over its memory
// instead of a cache miss each (at 100M requests, 458M shingles filled a
// 512 MiB filter in 3 minutes). SHA-256's bits are all as random.
func digestKey(d digest) uint64 { return binary.BigEndian.Uint64(d[:8]) }

func cmpDigest(a, b digest) int { return bytes.Compare(a[:], b[:]) }

// textSet is the shingles of the logged texts, sorted in a file (or, for
// a small set built in a test, in memory).
type textSet struct {
	r     io.ReaderAt // the digests from offset len(textsMagic)
	f     *os.File    // r, when a file
	path  string      // f's
	n     int64
	sum   [sha256.Size]byte // of the whole file
	index []digest          // the first digest of every block
	// quick: the cheap hashes of the shingles (quick.go), when built from
	// the texts in clear; digests: the digests, made when first needed
	// (a check without the quick hashes).
	quick      *bloom
	digestOnce sync.Once
	digests    *bloom

	errMu sync.Mutex
	err   error
}

// Err is the first error reading the set's file met by a check: the
// check's result is not to be trusted then.
func (t *textSet) Err() error {
	if t == nil {
		return nil
	}
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.err
}

func (t *textSet) fail(err error) {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	if t.err == nil {
		t.err = fmt.Errorf("%s: %w", textsName, err)
	}
}

func (t *textSet) close() error {
	if t == nil || t.f == nil {
		return nil
	}
	return t.f.Close()
}

// mayHaveQuick says whether a k-gram of cheap hash h may be a shingle.
func (t *textSet) mayHaveQuick(h uint64) bool {
	if t == nil || t.n == 0 {
		return false
	}
	return t.quick == nil || t.quick.mayHave(h) // without cheap hashes: maybe
}

// mayHold says whether d may be a shingle (the digest filter).
func (t *textSet) mayHold(d digest) bool {
	if t == nil || t.n == 0 {
		return false
	}
	t.digestOnce.Do(func() {
		if t.digests != nil {
			return
		}
		b := newBloom(t.n)
		if err := t.each(func(d digest) { b.add(digestKey(d)) }); err != nil {
			t.fail(err)
		}
		t.digests = b
	})
	return t.digests.mayHave(digestKey(d))
}

// each calls f with every digest of the set, in order.
func (t *textSet) each(f func(digest)) error {
	r := bufio.NewReaderSize(io.NewSectionReader(t.r, int64(len(textsMagic)), t.n*16), 1<<20)
	var d digest
	for range t.n {
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return err
		}
		f(d)
	}
	return nil
}

// has says whether d is a shingle: one block read. buf is the caller's
// scratch. A read error is kept (Err) and taken as "no".
func (t *textSet) has(d digest, buf *[]byte) bool {
	if t == nil || t.n == 0 {
		return false
	}
	b := sort.Search(len(t.index), func(i int) bool { return cmpDigest(t.index[i], d) > 0 }) - 1
	if b < 0 {
		return false
	}
	from := int64(b) * textBlock
	cnt := int(min(textBlock, t.n-from))
	if cap(*buf) < cnt*16 {
		*buf = make([]byte, textBlock*16)
	}
	blk := (*buf)[:cnt*16]
	if _, err := t.r.ReadAt(blk, int64(len(textsMagic))+from*16); err != nil {
		t.fail(err)
		return false
	}
	i := sort.Search(cnt, func(i int) bool { return bytes.Compare(blk[i*16:i*16+16], d[:]) >= 0 })
	return i < cnt && bytes.Equal(blk[i*16:i*16+16], d[:])
}

// textEntry is a shingle being sorted: its digest (two big-endian
// halves, so that the order is the bytes') and its cheap hash.
type textEntry struct{ hi, lo, q uint64 }

func cmpEntry(a, b textEntry) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

func (e textEntry) digest() digest {
	var d digest
	binary.BigEndian.PutUint64(d[:8], e.hi)
	binary.BigEndian.PutUint64(d[8:], e.lo)
	return d
}

// textBuilder gathers shingles and sorts them into a textSet: in memory up
// to textRun entries, in sorted runs spilled to files beyond. A full run is
// sorted and written on a goroutine of its own while the next is filled
// (two runs' memory, and one for the sort).
type textBuilder struct {
	run   []textEntry
	dir   string // where runs go: the set's directory
	added int64  // shingles added, before any duplicate is dropped
	max   int    // entries sorted in memory before a spill: textRun (0), or a test's

	// The spiller: spills takes full runs, free gives them back (room for
	// two: the last run and the one before it, written), spilled
	// its error once spills is closed. runs and lens are its, until then.
	spills  chan []textEntry
	free    chan []textEntry
	spilled chan error
	err     error
	runs    []string // the spilled runs' files
	lens    []int64  // their entries
}

func entryOf(d digest, q uint64) textEntry {
	return textEntry{binary.BigEndian.Uint64(d[:8]), binary.BigEndian.Uint64(d[8:]), q}
}

func (b *textBuilder) add(d digest, q uint64) { b.addEntry(entryOf(d, q)) }

func (b *textBuilder) addEntry(e textEntry) {
	b.added++
	b.run = append(b.run, e)
	if max := cmp.Or(b.max, textRun); len(b.run) >= max && b.dir != "" {
		if b.spills == nil {
			b.startSpiller()
			b.spills <- b.run
			b.run = make([]textEntry, 0, max)
		} else {
			b.spills <- b.run
			b.run = <-b.free // the run before, written
		}
	}
}

func (b *textBuilder) startSpiller() {
	b.spills, b.free, b.spilled = make(chan []textEntry), make(chan []textEntry, 2), make(chan error, 1)
	go func() {
		var err error
		var scratch []textEntry
		for run := range b.spills {
			if err == nil {
				if cap(scratch) < len(run) {
					scratch = make([]textEntry, len(run))
				}
				err = b.writeRun(sortUnique(run, scratch[:len(run)]))
			}
			b.free <- run[:0]
		}
		b.spilled <- err
	}()
}

// stopSpiller waits for the runs sent to be written; its error is theirs.
func (b *textBuilder) stopSpiller() error {
	if b.spills != nil {
		close(b.spills)
		b.err = <-b.spilled
		b.spills = nil
	}
	return b.err
}

// sortUnique sorts run into scratch (as long), each digest once, and
// returns that part of scratch: a counting sort on the digests' top 16
// bits (SHA-256: evenly spread), then each small bucket sorted. pdqsort
// of a 2M-entry run was a tenth of the draft's CPU at 10M.
func sortUnique(run, scratch []textEntry) []textEntry {
	const bucketBits = 16
	counts := make([]int, 1<<bucketBits+1)
	for _, e := range run {
		counts[e.hi>>(64-bucketBits)+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	pos := slices.Clone(counts[:1<<bucketBits])
	for _, e := range run {
		k := e.hi >> (64 - bucketBits)
		scratch[pos[k]] = e
		pos[k]++
	}
	for k := range 1 << bucketBits {
		if counts[k+1]-counts[k] > 1 {
			slices.SortFunc(scratch[counts[k]:counts[k+1]], cmpEntry)
		}
	}
	return slices.CompactFunc(scratch, func(a, b textEntry) bool { return a.hi == b.hi && a.lo == b.lo })
}

func (b *textBuilder) writeRun(run []textEntry) error {
	f, err := os.CreateTemp(b.dir, ".isolation-texts-run-*")
	if err != nil {
		return err
	}
	b.runs = append(b.runs, f.Name())
	b.lens = append(b.lens, int64(len(run)))
	w := bufio.NewWriterSize(f, 1<<20)
	var rec [24]byte
	for _, e := range run {
		binary.LittleEndian.PutUint64(rec[:], e.hi)
		binary.LittleEndian.PutUint64(rec[8:], e.lo)
		binary.LittleEndian.PutUint64(rec[16:], e.q)
		w.Write(rec[:])
	}
	return errors.Join(w.Flush(), f.Close())
}

// removeRuns stops the spiller and removes the runs' files.
func (b *textBuilder) removeRuns() {
	b.stopSpiller()
	for _, r := range b.runs {
		os.Remove(r)
	}
	b.runs, b.lens = nil, nil
}

// finish writes the set to path (a file written whole, then renamed into
// place) and opens it; path "" keeps a small set in memory (the tests').
func (b *textBuilder) finish(path string) (*textSet, error) {
	defer b.removeRuns()
	var next func() (textEntry, bool, error)
	var bound int64
	if b.spills == nil {
		run := sortUnique(b.run, make([]textEntry, len(b.run)))
		b.run = nil
		bound = int64(len(run))
		i := 0
		next = func() (textEntry, bool, error) {
			if i == len(run) {
				return textEntry{}, false, nil
			}
			i++
			return run[i-1], true, nil
		}
	} else {
		if len(b.run) > 0 {
			b.spills <- b.run
		}
		b.run = nil
		if err := b.stopSpiller(); err != nil {
			return nil, fmt.Errorf("%s: %w", textsName, err)
		}
		m, err := openMerge(b.runs, b.lens)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", textsName, err)
		}
		defer m.close()
		for _, n := range b.lens {
			bound += n
		}
		next = m.next
	}
	t := &textSet{quick: newBloom(bound)}
	quick := newBloomFiller(t.quick)
	defer quick.wait()
	var out io.Writer
	var mem bytes.Buffer
	var f *os.File
	var tmp string
	if path == "" {
		out = &mem
	} else {
		var err error
		if f, err = os.CreateTemp(filepath.Dir(path), ".isolation-texts-*"); err != nil {
			return nil, fmt.Errorf("%s: %w", textsName, err)
		}
		tmp = f.Name()
		defer os.Remove(tmp) // gone once renamed
		out = f
	}
	sum := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(out, sum), 1<<20)
	w.WriteString(textsMagic)
	for {
		e, ok, err := next()
		if err != nil {
			if f != nil {
				f.Close()
			}
			return nil, fmt.Errorf("%s: %w", textsName, err)
		}
		if !ok {
			break
		}
		d := e.digest()
		if t.n%textBlock == 0 {
			t.index = append(t.index, d)
		}
		t.n++
		quick.add(e.q)
		w.Write(d[:])
	}
	err := w.Flush()
	copy(t.sum[:], sum.Sum(nil))
	if f == nil {
		t.r = bytes.NewReader(mem.Bytes())
		return t, err
	}
	// CreateTemp's file is the owner's alone; the outbox's others are not.
	if err := errors.Join(err, f.Chmod(0o644), f.Close()); err != nil {
		return nil, fmt.Errorf("%s: %w", textsName, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("%s: %w", textsName, err)
	}
	if t.f, err = os.Open(path); err != nil {
		return nil, fmt.Errorf("%s: %w", textsName, err)
	}
	t.r, t.path = t.f, path
	return t, nil
}

// moveTo renames the set's file (open, and read still) to path.
func (t *textSet) moveTo(path string) error {
	if err := os.Rename(t.path, path); err != nil {
		return fmt.Errorf("%s: %w", textsName, err)
	}
	t.path = path
	return nil
}

// merge reads sorted runs in order, each digest once.
type merge struct {
	rs    []*runReader
	left  []int64
	heads []textEntry
	heap  []int // runs by head, a min-heap
	last  textEntry
	any   bool
}

func openMerge(paths []string, lens []int64) (*merge, error) {
	m := &merge{left: slices.Clone(lens)}
	for i, p := range paths {
		r, err := openRun(p)
		if err != nil {
			m.close()
			return nil, err
		}
		m.rs = append(m.rs, r)
		m.heads = append(m.heads, textEntry{})
		ok, err := m.advance(i)
		if err != nil {
			m.close()
			return nil, err
		}
		if ok {
			m.heap = append(m.heap, i)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *merge) close() {
	for _, r := range m.rs {
		r.Close()
	}
}

func (m *merge) advance(i int) (bool, error) {
	if m.left[i] == 0 {
		return false, nil
	}
	m.left[i]--
	var rec [24]byte
	if err := m.rs[i].readFull(rec[:]); err != nil {
		return false, err
	}
	m.heads[i] = textEntry{binary.LittleEndian.Uint64(rec[:]), binary.LittleEndian.Uint64(rec[8:]), binary.LittleEndian.Uint64(rec[16:])}
	return true, nil
}

func (m *merge) less(a, b int) bool { return cmpEntry(m.heads[m.heap[a]], m.heads[m.heap[b]]) < 0 }

func (m *merge) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(m.heap) {
			return
		}
		if r := l + 1; r < len(m.heap) && m.less(r, l) {
			l = r
		}
		if !m.less(l, i) {
			return
		}
		m.heap[i], m.heap[l] = m.heap[l], m.heap[i]
		i = l
	}
}

func (m *merge) next() (textEntry, bool, error) {
	for len(m.heap) > 0 {
		top := m.heap[0]
		e := m.heads[top]
		ok, err := m.advance(top)
		if err != nil {
			return textEntry{}, false, err
		}
		if !ok {
			m.heap[0] = m.heap[len(m.heap)-1]
			m.heap = m.heap[:len(m.heap)-1]
		}
		m.down(0)
		if m.any && cmpEntry(e, m.last) == 0 {
			continue // in more than one run
		}
		m.last, m.any = e, true
		return e, true, nil
	}
	return textEntry{}, false, nil
}

// readTexts opens an outbox's isolation.texts and proves it is the one the
// manifest records (n digests, its SHA-256) and sorted, each digest once:
// the check's lookups rely on the order. The digest filter is made on the
// way.
func readTexts(path string, n int64, sum [sha256.Size]byte) (*textSet, error) {
	return scanTexts(path, nil).verify(n, sum)
}

// textsScan is a texts file read through before the manifest's record of
// it is known (readManifest reads both at once): what verify then needs.
type textsScan struct {
	t    *textSet
	path string
	size int64
	sum  [sha256.Size]byte
	err  error // an error of the file's content, reported after its size
}

// scanTexts reads a texts file through: its order, SHA-256, sparse index
// and digest filter. Its errors wait for verify, which knows the size the
// manifest records. It stops early when stop (nil: never) is set: the
// manifest was refused, or the check canceled.
func scanTexts(path string, stop *atomic.Bool) (s textsScan) {
	s.path = path
	f, err := os.Open(path)
	if err != nil {
		s.err = fmt.Errorf("isolation manifest: %w", err)
		return s
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		s.err = fmt.Errorf("%s: %v", filepath.Base(path), err)
		return s
	}
	s.size = st.Size()
	n := max(0, (s.size-int64(len(textsMagic)))/16)
	t := &textSet{r: f, f: f, path: path, n: n}
	s.t = t
	bad := func(msg string, args ...any) textsScan {
		s.err = fmt.Errorf("%s: %s", filepath.Base(path), fmt.Sprintf(msg, args...))
		return s
	}
	h := sha256.New()
	r := bufio.NewReaderSize(io.TeeReader(f, h), 1<<20)
	head := make([]byte, len(textsMagic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != textsMagic {
		return bad("not a leakmap isolation texts file of this version: redraft the notices")
	}
	t.digests = newBloom(n)
	var d, prev digest
	for i := range n {
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return bad("%v", err)
		}
		if i > 0 && cmpDigest(prev, d) >= 0 {
			return bad("shingle %d is out of order: edited or damaged, redraft the notices", i+1)
		}
		if i%textBlock == 0 {
			if stop != nil && stop.Load() {
				return bad("not read: stopped")
			}
			t.index = append(t.index, d)
		}
		t.digests.add(digestKey(d))
		prev = d
	}
	if _, err := io.Copy(h, f); err != nil { // a partial shingle at the end
		return bad("%v", err)
	}
	h.Sum(s.sum[:0])
	return s
}

// verify is the scanned file if it is the one the manifest records: n
// digests (its size), its SHA-256, and in order. Else it is closed.
func (s textsScan) verify(n int64, sum [sha256.Size]byte) (*textSet, error) {
	fail := func(err error) (*textSet, error) {
		s.close()
		return nil, err
	}
	switch {
	case s.t == nil:
		return fail(s.err)
	case s.size != int64(len(textsMagic))+16*n:
		return fail(fmt.Errorf("%s: %d bytes, but the manifest records %d shingles: redraft the notices", filepath.Base(s.path), s.size, n))
	case s.err != nil:
		return fail(s.err)
	case s.sum != sum:
		return fail(fmt.Errorf("%s: differs from the manifest's record of it (SHA-256): edited or damaged, redraft the notices", filepath.Base(s.path)))
	}
	s.t.sum = sum
	return s.t, nil
}

// close closes the scanned file (a manifest refused before verify).
func (s textsScan) close() {
	if s.t != nil {
		s.t.f.Close()
	}
}

// sameFiles says whether the files at a and b hold the same bytes (false
// too when either cannot be read), read a piece at a time.
func sameFiles(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	return sameAs(b, func(w io.Writer) error {
		_, err := io.Copy(w, bufio.NewReaderSize(fa, 1<<20))
		return err
	})
}
