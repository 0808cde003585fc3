package notify

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"sort"
	"sync"
)

// idTable is the manifest's identifiers, compact: one 24-byte record each,
// sorted by digest, behind a hash index of 4-byte slots and a Bloom filter
// of their cheap hashes. Held as maps of slices (a map entry, a slice of
// owners, an entry in the owner's list, a slot of an exact set of cheap
// hashes) they took about 170 bytes each: 0.3 GB at 10M requests, where
// the case names 1.85 million request ids. Past idRun records they go to
// disk (idspill.go).
type idTable struct {
	recs    []idRec
	qs      []uint64 // the records' cheap hashes, until sealed
	owners  []string // owner keys, by index
	ownerIx map[string]uint32
	kinds   []string
	kindIx  map[string]uint8
	// fromClear: built from the identifiers in clear, so the cheap
	// hashes are known (quick.go); not when read from a file.
	fromClear bool

	mu       sync.Mutex
	sealed   bool
	slots    []uint32 // 1 + the index of the first record of a digest; 0: empty
	shift    uint
	quick    *bloom // the cheap hashes (fromClear)
	ks       []int  // the identifiers' lengths in words
	distinct int    // distinct digests
	generics int    // distinct generic digests
	// digests: a filter of the digests, made when first needed (a check
	// without the cheap hashes), as textSet's.
	digestOnce sync.Once
	digests    *bloom

	// On disk (idspill.go), past idRun records: dir is where they go
	// ("": kept in memory); runs and qf hold them until sealed, then file
	// (n records, index: the first digest of every idBlock) does.
	dir   string
	runs  *recRuns
	qf    *os.File
	qw    *bufio.Writer
	nq    int64
	file  *os.File
	n     int64
	index []digest
	// ofile: the same records in the manifest file's order, an owner's
	// from osec[owner][0] to osec[owner][1] (ownRecords).
	ofile    *os.File
	osec     [][2]int64
	errMu    sync.Mutex
	err      error // a spill's or a read's, the first
	spillErr error // a spill's, read without the lock by add
}

// idRec is one identifier of one owner.
type idRec struct {
	d       digest
	owner   uint32 // idTable.owners
	k       uint16 // words
	kind    uint8  // idTable.kinds
	generic bool   // made of ordinary words: matched only as a unit (generic.go)
}

// add records an identifier; a repeat (the same words, owner and kind) is
// dropped when sealed. q is its cheap hash (fromClear).
func (t *idTable) add(owner, kind string, k int, d digest, generic bool, q uint64) error {
	if t.sealed {
		panic("notify: an identifier added to a sealed manifest")
	}
	if t.spillErr != nil {
		return t.spillErr
	}
	if k > 1<<16-1 {
		return fmt.Errorf("an identifier of %d words", k)
	}
	o, ok := t.ownerIx[owner]
	if !ok {
		if t.ownerIx == nil {
			t.ownerIx, t.kindIx = map[string]uint32{}, map[string]uint8{}
		}
		o = uint32(len(t.owners))
		t.owners = append(t.owners, owner)
		t.ownerIx[owner] = o
	}
	ki, ok := t.kindIx[kind]
	if !ok {
		if len(t.kinds) == 1<<8 {
			return fmt.Errorf("more than %d kinds of identifier", 1<<8)
		}
		if t.kindIx == nil {
			t.ownerIx, t.kindIx = map[string]uint32{}, map[string]uint8{}
		}
		ki = uint8(len(t.kinds))
		t.kinds = append(t.kinds, kind)
		t.kindIx[kind] = ki
	}
	t.recs = append(t.recs, idRec{d: d, owner: o, k: uint16(k), kind: ki, generic: generic})
	if t.fromClear {
		t.qs = append(t.qs, q)
	}
	if t.dir != "" && len(t.recs) >= idRun {
		return t.spill()
	}
	return nil
}

// onDisk says whether the records went to disk (idspill.go).
func (t *idTable) onDisk() bool { return t.runs != nil || t.file != nil }

func cmpRec(a, b idRec) int {
	if c := cmpDigest(a.d, b.d); c != 0 {
		return c
	}
	if c := cmp.Compare(a.owner, b.owner); c != 0 {
		return c
	}
	return cmp.Compare(a.kind, b.kind)
}

// seal sorts the records, drops repeats, and makes the index and filter;
// nothing is added after. It may be called more than once, and returns
// the first's error.
func (t *idTable) seal() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sealed {
		return t.Err()
	}
	t.sealed = true
	if t.onDisk() {
		if err := t.sealDisk(); err != nil {
			t.fail(err)
			return t.Err()
		}
		return nil
	}
	if t.fromClear {
		t.quick = newBloom(int64(len(t.qs)))
		for _, q := range t.qs {
			t.quick.add(q)
		}
		t.qs = nil
	}
	slices.SortFunc(t.recs, cmpRec)
	t.recs = compactRecs(t.recs, cmpRec)
	t.recs = slices.Clip(t.recs)
	// A digest is generic for every owner when it is for one (its words
	// are the same); the runs of a digest are counted on the way.
	for i := 0; i < len(t.recs); {
		j, gen := i, false
		for ; j < len(t.recs) && t.recs[j].d == t.recs[i].d; j++ {
			gen = gen || t.recs[j].generic
		}
		for x := i; x < j; x++ {
			t.recs[x].generic = gen
		}
		t.distinct++
		if gen {
			t.generics++
		}
		t.ks = addK(t.ks, int(t.recs[i].k))
		i = j
	}
	size := 1 << 4 // at most three quarters full
	for size*3 < t.distinct*4 {
		size <<= 1
	}
	t.slots = make([]uint32, size)
	t.shift = uint(64 - bits.Len(uint(size-1)))
	mask := uint64(size - 1)
	for i := range t.recs {
		if i > 0 && t.recs[i-1].d == t.recs[i].d {
			continue
		}
		for s := idKey(t.recs[i].d) >> t.shift; ; s = (s + 1) & mask {
			if t.slots[s] == 0 {
				t.slots[s] = uint32(i) + 1
				break
			}
		}
	}
	return nil
}

func idKey(d digest) uint64 { return binary.LittleEndian.Uint64(d[:8]) }

// lookup returns the records of digest d (none: not an identifier); sc is
// the caller's scratch, which the result may be read from until the next
// lookup with it.
func (t *idTable) lookup(d digest, sc *idScratch) []idRec {
	if t.distinct == 0 {
		return nil
	}
	if t.file != nil {
		return t.lookupDisk(d, sc)
	}
	mask := uint64(len(t.slots) - 1)
	for s := idKey(d) >> t.shift; ; s = (s + 1) & mask {
		i := t.slots[s]
		if i == 0 {
			return nil
		}
		if t.recs[i-1].d == d {
			j := int(i)
			for j < len(t.recs) && t.recs[j].d == d {
				j++
			}
			return t.recs[i-1 : j]
		}
	}
}

// mayHold says whether d may be an identifier (the digest filter): one
// word read instead of a probe of the index for almost every k-gram.
func (t *idTable) mayHold(d digest) bool {
	t.digestOnce.Do(func() {
		t.digests = newBloom(int64(t.distinct)) // on disk: made when sealed
		for _, r := range t.recs {
			t.digests.add(digestKey(r.d))
		}
	})
	return t.digests.mayHave(digestKey(d))
}

// mayHaveQuick says whether a k-gram of cheap hash h may be an identifier
// (yes when the cheap hashes are not known).
func (t *idTable) mayHaveQuick(h uint64) bool { return t.quick == nil || t.quick.mayHave(h) }

// owner returns the index of an owner key, or a value no record has.
func (t *idTable) owner(key string) uint32 {
	if o, ok := t.ownerIx[key]; ok {
		return o
	}
	return ^uint32(0)
}

// ownerOrder is the manifest file's order of records: owner key, kind,
// digest.
func (t *idTable) ownerOrder() func(x, y idRec) int {
	rank := func(names []string) []uint32 {
		order := make([]int, len(names))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
		r := make([]uint32, len(names))
		for pos, i := range order {
			r[i] = uint32(pos)
		}
		return r
	}
	or, kr := rank(t.owners), rank(t.kinds)
	return func(x, y idRec) int {
		if c := cmp.Compare(or[x.owner], or[y.owner]); c != 0 {
			return c
		}
		if c := cmp.Compare(kr[x.kind], kr[y.kind]); c != 0 {
			return c
		}
		return cmpDigest(x.d, y.d)
	}
}

// byOwner calls f with the records in the manifest file's order.
func (t *idTable) byOwner(f func(idRec) error) error {
	if t.file != nil {
		return t.eachDisk(t.ofile, t.n, f)
	}
	order := t.ownerOrder()
	perm := make([]uint32, len(t.recs))
	for i := range perm {
		perm[i] = uint32(i)
	}
	slices.SortFunc(perm, func(a, b uint32) int { return order(t.recs[a], t.recs[b]) })
	for _, i := range perm {
		if err := f(t.recs[i]); err != nil {
			return err
		}
	}
	return nil
}
