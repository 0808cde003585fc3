package analysis

// holderTable maps the row_id of each row holding slots now to its owner
// index: open addressing with linear probing and backward-shift deletion.
// Every replayed row goes in and out once; Go's map took half the
// replay's time (BenchmarkReplay).
type holderTable struct {
	keys []int64
	vals []int32 // owner index + 1; 0 marks an empty cell
	n    int
	mask int
}

func (h *holderTable) home(k int64) int {
	return int((uint64(k)*0x9E3779B97F4A7C15)>>32) & h.mask
}

// get is k's owner index, if k holds slots.
func (h *holderTable) get(k int64) (int32, bool) {
	if h.n == 0 {
		return 0, false
	}
	for i := h.home(k); h.vals[i] != 0; i = (i + 1) & h.mask {
		if h.keys[i] == k {
			return h.vals[i] - 1, true
		}
	}
	return 0, false
}

// put sets k's owner index; k must not be in the table.
func (h *holderTable) put(k int64, id int32) {
	if 2*(h.n+1) > len(h.keys) {
		h.grow()
	}
	i := h.home(k)
	for h.vals[i] != 0 {
		i = (i + 1) & h.mask
	}
	h.keys[i], h.vals[i] = k, id+1
	h.n++
}

// del removes k and returns its owner index, if it was there.
func (h *holderTable) del(k int64) (int32, bool) {
	if h.n == 0 {
		return 0, false
	}
	i := h.home(k)
	for ; h.vals[i] != 0; i = (i + 1) & h.mask {
		if h.keys[i] == k {
			break
		}
	}
	if h.vals[i] == 0 {
		return 0, false
	}
	id := h.vals[i] - 1
	// Shift back the cells after i that probing would no longer reach.
	for j := (i + 1) & h.mask; h.vals[j] != 0; j = (j + 1) & h.mask {
		if (j-h.home(h.keys[j]))&h.mask >= (j-i)&h.mask {
			h.keys[i], h.vals[i] = h.keys[j], h.vals[j]
			i = j
		}
	}
	h.vals[i] = 0
	h.n--
	return id, true
}

func (h *holderTable) grow() {
	keys, vals := h.keys, h.vals
	size := max(64, 2*len(keys))
	h.keys, h.vals, h.mask, h.n = make([]int64, size), make([]int32, size), size-1, 0
	for i, v := range vals {
		if v != 0 {
			h.put(keys[i], v-1)
		}
	}
}
