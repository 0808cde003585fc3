package textmatch

import (
	"unicode"
	"unicode/utf8"
)

// ShingleWords is the number of consecutive words in a shingle.
//
// The isolation check in package notify keeps 6-word shingles hashed with
// SHA-256, on purpose: it blocks a notice on a single shared shingle, so a
// longer shingle keeps ordinary 5-word phrases of a notice's own wording from
// blocking it, and its hashes are written into the outbox's manifest (a file
// that leaves the case; format v1 names the shingle size). Evidence here
// never rests on one shingle (see Thresholds) and stays inside the case.
// Both split words the same way (letters and digits, lowercased).
//
// The shingle, precisely: the text is split into words at every rune that is
// neither a letter nor a digit (unicode.IsLetter, unicode.IsDigit); each word
// is lowercased (unicode.ToLower) and hashed with 64-bit FNV-1a over its
// UTF-8 bytes; a shingle is ShingleWords consecutive words, and its 64-bit
// hash mixes the word hashes in order. A text of fewer than ShingleWords
// words has no shingle: a handful of common words is no evidence. Only
// these hashes ever leave the query that reads the text.
const ShingleWords = 5

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// asciiFold maps each byte below utf8.RuneSelf to itself lowercased when
// it is a letter or a digit and to 0 when it splits words; the bytes from
// utf8.RuneSelf up, which start or continue a multi-byte rune, to 0xff.
var asciiFold = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = 0xff
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c + 'a' - 'A')
		}
	}
	return t
}()

// WordHashes appends the hash of every word of text to dst. ASCII, most of
// any log's text, takes one table lookup a byte; a multi-byte rune is
// decoded and classified by package unicode.
func WordHashes(text string, dst []uint64) []uint64 {
	var h uint64
	in := false
	for i := 0; i < len(text); {
		switch f := asciiFold[text[i]]; f {
		case 0: // an ASCII byte that splits words
			if in {
				dst = append(dst, h)
				in = false
			}
			i++
			continue
		case 0xff:
		default: // an ASCII letter or digit
			if !in {
				h, in = fnvOffset, true
			}
			h = (h ^ uint64(f)) * fnvPrime
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if in {
				dst = append(dst, h)
				in = false
			}
			continue
		}
		if !in {
			h, in = fnvOffset, true
		}
		// unicode.ToLower of a multi-byte letter may be ASCII (K, the
		// Kelvin sign, is k): hash the bytes of the rune it gives.
		var b [utf8.UTFMax]byte
		n := utf8.EncodeRune(b[:], unicode.ToLower(r))
		for _, x := range b[:n] {
			h = (h ^ uint64(x)) * fnvPrime
		}
	}
	if in {
		dst = append(dst, h)
	}
	return dst
}

// Shingles appends the hash of every shingle of text to dst, in text order
// (with repeats); words is scratch space, returned for reuse.
func Shingles(text string, dst, words []uint64) ([]uint64, []uint64) {
	words = WordHashes(text, words[:0])
	for i := 0; i+ShingleWords <= len(words); i++ {
		dst = append(dst, mixShingle(words[i:i+ShingleWords]))
	}
	return dst, words
}

// mixShingle combines word hashes, in order, into one 64-bit hash.
func mixShingle(words []uint64) uint64 {
	h := uint64(fnvOffset)
	for _, w := range words {
		h = (h ^ w) * fnvPrime
		h ^= h >> 29
	}
	return splitmix(h)
}

func splitmix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
