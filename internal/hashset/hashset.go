// Package hashset holds a set of 64-bit hashes that is emptied for each
// group of values (a text's shingles, a bucket of request ids) without
// clearing its memory.
package hashset

// Stamped is a set of hashes, emptied by Reset without clearing a map: a
// slot is in the set when its stamp is the current one. Open addressing on
// the hash's low bits (the hashes are mixed). The zero value is ready for
// Reset.
type Stamped struct {
	keys  []uint64
	stamp []uint32
	now   uint32
	mask  uint64
}

// Reset empties the set, sized for n hashes.
func (d *Stamped) Reset(n int) {
	if size := len(d.keys); size < 2*n || size == 0 {
		size = max(64, size)
		for size < 2*n {
			size *= 2
		}
		d.keys, d.stamp, d.now, d.mask = make([]uint64, size), make([]uint32, size), 0, uint64(size-1)
	}
	if d.now++; d.now == 0 {
		clear(d.stamp) // the stamps wrapped around
		d.now = 1
	}
}

// Add puts h in the set; it reports whether h was not in it.
func (d *Stamped) Add(h uint64) bool {
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		if d.stamp[i] != d.now {
			d.stamp[i], d.keys[i] = d.now, h
			return true
		}
		if d.keys[i] == h {
			return false
		}
	}
}
