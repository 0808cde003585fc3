package notify

import (
	"hash/maphash"
)

// The draft checks each notice against a manifest it built itself, from
// the identifiers and texts in clear. Beside each SHA-256 digest it then
// keeps a cheap 64-bit hash of the same word sequence, in a Bloom filter
// (idTable.quick, textSet.quick), so that the check hashes a notice's
// k-grams with SHA-256 only when the cheap hash may be in it: almost never,
// as a notice holds few identifiers. Equal word sequences have equal cheap
// hashes, so the filter never turns a k-gram away that the manifest holds:
// it only skips lookups that would fail, and the check's result is the
// same. A manifest read from a file
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

// bloomBits are the three bits of h in its word, from bits the word's
// index (the top ones) does not use.
func bloomBits(h uint64) uint64 {
	return 1<<(h&63) | 1<<((h>>6)&63) | 1<<((h>>12)&63)
}
