package notify

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// A case names one identifier for about every five requests (21 million at
// 100M requests), and in memory the table took about 40 bytes each with
// its cheap hashes and index: 0.8 GB of Go heap at 100M, growing with the
// case. Past idRun records the table goes to disk instead, as the texts do
// (texts.go): the records are sorted in runs of idRun spilled beside the
// outbox, merged when sealed into one file sorted by digest, and read a
// block at a time by lookup; in memory stay the owners and kinds, a sparse
// index (one digest per idBlock records) and the two filters. A second
// file, sorted the same way from the records as the first is written,
// holds them in the manifest file's order (owner, kind, digest): the manifest is written
// from it, and a notice's check reads its owner's records from it at once
// (loadOwn).

// idRun is the records an idTable holds in memory (24 bytes each, and 8
// of cheap hash: 64 MiB, as many entries as a texts run) and the size of a
// spilled run; a variable for the tests.
var idRun = 1 << 21

const (
	idRecSize = 24
	idBlock   = 128 // records per block read: 3 KiB
)

func putRec(b []byte, r idRec) {
	copy(b, r.d[:])
	binary.LittleEndian.PutUint32(b[16:], r.owner)
	binary.LittleEndian.PutUint16(b[20:], r.k)
	b[22] = r.kind
	b[23] = 0
	if r.generic {
		b[23] = 1
	}
}

func getRec(b []byte) (r idRec) {
	copy(r.d[:], b)
	r.owner = binary.LittleEndian.Uint32(b[16:])
	r.k = binary.LittleEndian.Uint16(b[20:])
	r.kind = b[22]
	r.generic = b[23] == 1
	return r
}

// compactRecs drops the repeats of sorted records, keeping one generic
// when any of them is.
func compactRecs(recs []idRec, cmp func(a, b idRec) int) []idRec {
	out := recs[:0]
	for _, r := range recs {
		if n := len(out); n > 0 && cmp(out[n-1], r) == 0 {
			out[n-1].generic = out[n-1].generic || r.generic
			continue
		}
		out = append(out, r)
	}
	return out
}

// createTempIn creates a temporary file in dir, or in the system's
// temporary directory when dir refuses it (an outbox on read-only media,
// checked where it lies).
func createTempIn(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil && dir != "" && dir != os.TempDir() {
		if f, err2 := os.CreateTemp("", pattern); err2 == nil {
			return f, nil
		}
	}
	return f, err
}

// recRuns sorts records too many to hold: each batch given to spill is
// sorted in place, each record once, and written to a run file in dir;
// each merges the runs.
type recRuns struct {
	dir  string
	cmp  func(a, b idRec) int
	runs []string
	lens []int64
}

func (s *recRuns) spill(recs []idRec) error {
	slices.SortFunc(recs, s.cmp)
	recs = compactRecs(recs, s.cmp)
	f, err := createTempIn(s.dir, ".isolation-ids-run-*")
	if err != nil {
		return err
	}
	s.runs = append(s.runs, f.Name())
	s.lens = append(s.lens, int64(len(recs)))
	w := bufio.NewWriterSize(f, 1<<20)
	var b [idRecSize]byte
	for _, r := range recs {
		putRec(b[:], r)
		w.Write(b[:])
	}
	return errors.Join(w.Flush(), f.Close())
}

func (s *recRuns) remove() {
	for _, p := range s.runs {
		os.Remove(p)
	}
	s.runs, s.lens = nil, nil
}

// each calls f with every record of the runs in order, each once, and
// removes the runs.
func (s *recRuns) each(f func(idRec) error) error {
	defer s.remove()
	m := recMerge{cmp: s.cmp, left: slices.Clone(s.lens)}
	defer m.close()
	for i, p := range s.runs {
		r, err := openRun(p)
		if err != nil {
			return err
		}
		m.rs = append(m.rs, r)
		m.heads = append(m.heads, idRec{})
		ok, err := m.advance(i)
		if err != nil {
			return err
		}
		if ok {
			m.heap = append(m.heap, i)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	for {
		r, ok, err := m.next()
		if err != nil || !ok {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
	}
}

// recMerge reads sorted runs of records in order, each record once. It is
// the texts' merge (texts.go) for records in an order given as a function;
// the texts' compares inline, as it must for 458 million entries at 100M.
type recMerge struct {
	cmp   func(a, b idRec) int
	rs    []*runReader
	left  []int64
	heads []idRec
	heap  []int
}

func (m *recMerge) close() {
	for _, r := range m.rs {
		r.Close()
	}
}

func (m *recMerge) advance(i int) (bool, error) {
	if m.left[i] == 0 {
		return false, nil
	}
	m.left[i]--
	var b [idRecSize]byte
	if err := m.rs[i].readFull(b[:]); err != nil {
		return false, err
	}
	m.heads[i] = getRec(b[:])
	return true, nil
}

func (m *recMerge) less(a, b int) bool { return m.cmp(m.heads[m.heap[a]], m.heads[m.heap[b]]) < 0 }

func (m *recMerge) down(i int) {
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

func (m *recMerge) next() (idRec, bool, error) {
	if len(m.heap) == 0 {
		return idRec{}, false, nil
	}
	r, err := m.pop()
	for err == nil && len(m.heap) > 0 && m.cmp(m.heads[m.heap[0]], r) == 0 {
		var dup idRec // in more than one run
		dup, err = m.pop()
		r.generic = r.generic || dup.generic
	}
	return r, err == nil, err
}

func (m *recMerge) pop() (idRec, error) {
	top := m.heap[0]
	r := m.heads[top]
	ok, err := m.advance(top)
	if err != nil {
		return idRec{}, err
	}
	if !ok {
		m.heap[0] = m.heap[len(m.heap)-1]
		m.heap = m.heap[:len(m.heap)-1]
	}
	m.down(0)
	return r, nil
}

// spill sends the records held in memory, and their cheap hashes, to disk.
// Its error is kept: the next add returns it instead of sorting the
// records again (a full disk).
func (t *idTable) spill() error {
	if t.spillErr != nil {
		return t.spillErr
	}
	if t.spillErr = t.spillOnce(); t.spillErr != nil {
		t.fail(t.spillErr)
	}
	return t.spillErr
}

func (t *idTable) spillOnce() error {
	if t.runs == nil {
		t.runs = &recRuns{dir: t.dir, cmp: cmpRec}
	}
	if err := t.runs.spill(t.recs); err != nil {
		return fmt.Errorf("identifiers: %w", err)
	}
	t.recs = t.recs[:0]
	if t.fromClear {
		if t.qf == nil {
			f, err := createTempIn(t.dir, ".isolation-ids-quick-*")
			if err != nil {
				return fmt.Errorf("identifiers: %w", err)
			}
			t.qf, t.qw = f, bufio.NewWriterSize(f, 1<<20)
		}
		var b [8]byte
		for _, q := range t.qs {
			binary.LittleEndian.PutUint64(b[:], q)
			t.qw.Write(b[:])
		}
		t.nq += int64(len(t.qs))
		t.qs = t.qs[:0]
	}
	return nil
}

// sealDisk merges the spilled runs into the table's file, sorted by
// digest, each digest's records generic when one is, and makes the sparse
// index and the quick filter.
func (t *idTable) sealDisk() error {
	if len(t.recs) > 0 {
		if err := t.spill(); err != nil {
			return err
		}
	}
	t.recs, t.qs = nil, nil
	if t.qf != nil {
		t.quick = newBloom(t.nq)
		err := t.qw.Flush()
		if err == nil {
			_, err = t.qf.Seek(0, io.SeekStart)
		}
		r := bufio.NewReaderSize(t.qf, 1<<20)
		var b [8]byte
		for i := int64(0); err == nil && i < t.nq; i++ {
			if _, err = io.ReadFull(r, b[:]); err == nil {
				t.quick.add(binary.LittleEndian.Uint64(b[:]))
			}
		}
		t.qf.Close()
		os.Remove(t.qf.Name())
		t.qf, t.qw = nil, nil
		if err != nil {
			t.runs.remove()
			return fmt.Errorf("identifiers: %w", err)
		}
	}
	f, err := createTempIn(t.dir, ".isolation-ids-*")
	if err != nil {
		t.runs.remove()
		return fmt.Errorf("identifiers: %w", err)
	}
	t.file = f
	w := bufio.NewWriterSize(f, 1<<20)
	// The digest filter is filled here, in the digests' order, rather
	// than from the file read back when first asked (mayHold): every
	// lookup on disk asks it. Sized by the records, a bound of the
	// digests.
	var recs int64
	for _, n := range t.runs.lens {
		recs += n
	}
	t.digests = newBloom(recs)
	t.digestOnce.Do(func() {})
	// The records as written go to runs in the manifest file's order too
	// (writeOwners), without the file read back.
	owners := &recRuns{dir: t.dir, cmp: t.ownerOrder()}
	defer owners.remove()
	obuf := make([]idRec, 0, min(int64(idRun), recs))
	var ownErr error
	var group []idRec
	var b [idRecSize]byte
	flush := func() {
		gen := false
		for _, r := range group {
			gen = gen || r.generic
		}
		for _, r := range group {
			r.generic = gen
			if t.n%idBlock == 0 {
				t.index = append(t.index, r.d)
			}
			t.n++
			t.digests.add(digestKey(r.d))
			putRec(b[:], r)
			w.Write(b[:])
			if obuf = append(obuf, r); len(obuf) == idRun && ownErr == nil {
				ownErr = owners.spill(obuf)
				obuf = obuf[:0]
			}
		}
		t.distinct++
		if gen {
			t.generics++
		}
		t.ks = addK(t.ks, int(group[0].k))
		group = group[:0]
	}
	err = t.runs.each(func(r idRec) error {
		if len(group) > 0 && group[0].d != r.d {
			flush()
		}
		group = append(group, r)
		return nil
	})
	if err == nil && len(group) > 0 {
		flush()
	}
	t.runs = nil
	if err == nil && ownErr == nil && len(obuf) > 0 {
		ownErr = owners.spill(obuf)
	}
	obuf = nil
	if err = errors.Join(err, ownErr, w.Flush()); err != nil {
		return fmt.Errorf("identifiers: %w", err)
	}
	return t.writeOwners(owners)
}

// idScratch is a checker's buffers for lookups in a table on disk.
type idScratch struct {
	recs []idRec
	blk  []byte
}

// lookupDisk is lookup in the table's file: the blocks from the one
// before the first whose first digest is d or after it, until a record
// past d. A read error is kept (Err) and taken as "not an identifier".
func (t *idTable) lookupDisk(d digest, sc *idScratch) []idRec {
	sc.recs = sc.recs[:0]
	b := max(0, sort.Search(len(t.index), func(i int) bool { return cmpDigest(t.index[i], d) >= 0 })-1)
	if cap(sc.blk) < idBlock*idRecSize {
		sc.blk = make([]byte, idBlock*idRecSize)
	}
	for from := int64(b) * idBlock; from < t.n; from += idBlock {
		cnt := int(min(idBlock, t.n-from))
		blk := sc.blk[:cnt*idRecSize]
		if _, err := t.file.ReadAt(blk, from*idRecSize); err != nil {
			t.fail(err)
			return nil
		}
		i := sort.Search(cnt, func(i int) bool { return bytes.Compare(blk[i*idRecSize:i*idRecSize+16], d[:]) >= 0 })
		for ; i < cnt && bytes.Equal(blk[i*idRecSize:i*idRecSize+16], d[:]); i++ {
			sc.recs = append(sc.recs, getRec(blk[i*idRecSize:]))
		}
		if i < cnt {
			break // a record past d
		}
	}
	return sc.recs
}

// eachDisk calls f with the n records of file from the first, in order.
func (t *idTable) eachDisk(file *os.File, n int64, f func(idRec) error) error {
	return eachRecord(io.NewSectionReader(file, 0, n*idRecSize), n, f)
}

func eachRecord(r io.Reader, n int64, f func(idRec) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var b [idRecSize]byte
	for range n {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return fmt.Errorf("identifiers: %w", err)
		}
		if err := f(getRec(b[:])); err != nil {
			return err
		}
	}
	return nil
}

// writeOwners merges runs (the records in the manifest file's order) into
// ofile, and notes each owner's part.
func (t *idTable) writeOwners(runs *recRuns) error {
	var err error
	if t.ofile, err = createTempIn(t.dir, ".isolation-ids-owners-*"); err != nil {
		return fmt.Errorf("identifiers: %w", err)
	}
	t.osec = make([][2]int64, len(t.owners))
	w := bufio.NewWriterSize(t.ofile, 1<<20)
	var b [idRecSize]byte
	at := int64(0)
	err = runs.each(func(r idRec) error {
		if at == 0 || t.osec[r.owner][1] != at {
			t.osec[r.owner][0] = at
		}
		at++
		t.osec[r.owner][1] = at
		putRec(b[:], r)
		_, err := w.Write(b[:])
		return err
	})
	if err = errors.Join(err, w.Flush()); err != nil {
		return fmt.Errorf("identifiers: %w", err)
	}
	return nil
}

// ownRecords reads owner's records (its part of ofile) into own, sorted by
// digest; none for an owner without any (the regulator).
func (t *idTable) ownRecords(owner uint32, own []idRec) ([]idRec, error) {
	own = own[:0]
	if uint64(owner) >= uint64(len(t.osec)) {
		return own, nil
	}
	sec := t.osec[owner]
	err := eachRecord(io.NewSectionReader(t.ofile, sec[0]*idRecSize, (sec[1]-sec[0])*idRecSize), sec[1]-sec[0], func(r idRec) error {
		own = append(own, r)
		return nil
	})
	slices.SortFunc(own, func(a, b idRec) int { return cmpDigest(a.d, b.d) })
	return own, err
}

func (t *idTable) fail(err error) {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	if t.err == nil {
		t.err = fmt.Errorf("identifiers: %w", err)
	}
}

// Err is the first error reading the table's file met by a check.
func (t *idTable) Err() error {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.err
}

// close removes the table's files.
func (t *idTable) close() {
	if t.runs != nil {
		t.runs.remove()
	}
	for _, f := range []*os.File{t.qf, t.file, t.ofile} {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	t.qf, t.file, t.ofile = nil, nil, nil
}

// idCacheMax bounds a checker's cache of lookups on disk: about 4 MiB.
const idCacheMax = 1 << 16

// idsOf is the identifiers' records of digest d. A table on disk is read
// once for each, however many times the check asks (a hit is looked up
// when found, when the owner's own are masked, and when reported); the
// results are kept until idCacheMax of them are.
func (c *checker) idsOf(d digest) []idRec {
	t := &c.m.ids
	if t.file == nil {
		return t.lookup(d, nil)
	}
	if i, ok := slices.BinarySearchFunc(c.own, d, func(r idRec, d digest) int { return cmpDigest(r.d, d) }); ok {
		// The owner's own: the callers look no further than that (it
		// masks the words, and is never reported).
		return c.own[i : i+1]
	}
	if r, ok := c.idc[d]; ok {
		return r
	}
	if !t.mayHold(d) {
		return nil // most of a notice's words, asked whether generic
	}
	if len(c.idc) >= idCacheMax || c.idc == nil {
		c.idc = make(map[digest][]idRec, idCacheMax)
	}
	r := slices.Clone(t.lookup(d, &c.idsc))
	if t.Err() == nil {
		c.idc[d] = r
	}
	return r
}

func (c *checker) isGenericID(d digest) bool {
	r := c.idsOf(d)
	return len(r) > 0 && r[0].generic
}

// loadOwn makes the records of owner self, the notice's, the first idsOf
// looks in: a notice holds its owner's identifiers by the thousand (its
// requests), which would be a block read each.
func (c *checker) loadOwn(self uint32) {
	t := &c.m.ids
	if t.ofile == nil || (c.ownLoaded && c.ownOf == self) {
		return
	}
	var err error
	if c.own, err = t.ownRecords(self, c.own); err != nil {
		t.fail(err)
		c.own = c.own[:0]
	}
	c.ownLoaded, c.ownOf = true, self
}

// shedOwn lets go of a large owner's records after its notice.
func (c *checker) shedOwn() {
	if cap(c.own)*idRecSize > scratchKeep {
		c.own, c.ownLoaded = nil, false
	}
}
