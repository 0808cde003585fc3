package notify

import (
	"hash/maphash"
	"math/bits"
)

// The draft checks each notice against a manifest it built itself, from
// the identifiers and texts in clear. Beside each SHA-256 digest it then
// keeps a cheap 64-bit hash of the same word sequence (quickSet), so that
// the check hashes a notice's k-grams with SHA-256 only when the cheap
// hash is in the set: almost never, as a notice holds few identifiers.
// Equal word sequences have equal cheap hashes, so the set never turns a
// k-gram away that the manifest holds: it only skips lookups that would
// fail, and the check's result is the same. A manifest read from a file
// (notify check) has digests only and no quick set: there every k-gram is
// hashed with SHA-256, as before.

// quickSeed is per process: the quick hashes are never written anywhere.
var quickSeed = maphash.MakeSeed()

func wordHash(w string) uint64 { return maphash.String(quickSeed, w) }

// seqHash combines the word hashes of a k-gram, in order.
func seqHash(wh []uint64) uint64 {
	h := uint64(len(wh)) * 0x9e3779b97f4a7c15
	for _, x := range wh {
		h = (h ^ x) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	return h
}

func seqHashWords(ws []string) uint64 {
	var buf [maxUnitWords]uint64
	wh := buf[:0]
	for _, w := range ws {
		wh = append(wh, wordHash(w))
	}
	return seqHash(wh)
}

// quickSet is a set of 64-bit hashes: open addressing, linear probing, no
// pointers (the GC does not scan it). In front of the table a blocked
// Bloom filter (three bits in one 64-bit word per hash, 4 bits per slot:
// 1/16 of the table's size, so that it stays in the CPU's caches when the
// table, of millions of entries, does not) answers "not in the set" for
// almost every k-gram of a notice with one cached read instead of a probe
// of the table, a cache miss. It only turns away hashes that are not in
// the set.
type quickSet struct {
	slots  []uint64 // 0: empty (the hash 0 is stored as 1)
	shift  uint
	n      int
	bloom  []uint64 // len(slots)/16 words
	bshift uint
}

func newQuickSet() *quickSet {
	q := &quickSet{slots: make([]uint64, 1<<10), shift: 64 - 10}
	q.resetBloom()
	return q
}

func (q *quickSet) resetBloom() {
	q.bloom = make([]uint64, len(q.slots)/16)
	q.bshift = uint(64 - bits.Len(uint(len(q.bloom)-1)))
}

// bloomBits are the three bits of h in its word, from bits the word's
// index (the top ones) does not use.
func bloomBits(h uint64) uint64 {
	return 1<<(h&63) | 1<<((h>>6)&63) | 1<<((h>>12)&63)
}

func (q *quickSet) add(h uint64) {
	if h == 0 {
		h = 1
	}
	if 2*(q.n+1) > len(q.slots) {
		q.grow()
	}
	q.bloom[h>>q.bshift] |= bloomBits(h)
	mask := uint64(len(q.slots) - 1)
	for i := h >> q.shift; ; i = (i + 1) & mask {
		switch q.slots[i] {
		case h:
			return
		case 0:
			q.slots[i] = h
			q.n++
			return
		}
	}
}

func (q *quickSet) grow() {
	old := q.slots
	q.slots = make([]uint64, 2*len(old))
	q.shift = uint(64 - bits.Len(uint(len(q.slots)-1)))
	q.n = 0
	q.resetBloom()
	for _, h := range old {
		if h != 0 {
			q.add(h)
		}
	}
}

func (q *quickSet) has(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if b := bloomBits(h); q.bloom[h>>q.bshift]&b != b {
		return false
	}
	mask := uint64(len(q.slots) - 1)
	for i := h >> q.shift; ; i = (i + 1) & mask {
		switch q.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}
