package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

type digest [16]byte

// hasher hashes word k-grams; it is not safe for concurrent use.
type hasher struct {
	h   hash.Hash
	buf []byte
	sum []byte
}

func newHasher() *hasher { return &hasher{h: sha256.New()} }

func (x *hasher) kgram(words []string) digest {
	x.buf = append(x.buf[:0], "leakmap-isolation\x00"...)
	for i, w := range words {
		if i > 0 {
			x.buf = append(x.buf, ' ')
		}
		x.buf = append(x.buf, w...)
	}
	x.h.Reset()
	x.h.Write(x.buf)
	x.sum = x.h.Sum(x.sum[:0])
	var d digest
	copy(d[:], x.sum)
	return d
}

// ownerKey names a notice's owner in the manifest without naming the tenant.
func ownerKey(tenantID string) string {
	h := sha256.Sum256([]byte("leakmap-owner\x00" + tenantID))
	return hex.EncodeToString(h[:16])
}

// words splits s, normalised (normalize), into runs of letters and digits.
func words(s string) []string { return splitWords(normalize(s)) }

// splitWords splits already normalised text into runs of letters and digits.
func splitWords(s string) []string { return appendWords(nil, s) }

// appendWordsAt is appendWords, also appending each word's byte offset in
// s to starts.
func appendWordsAt(out []string, starts []int, s string) ([]string, []int) {
	n := len(out)
	out = appendWords(out, s)
	for _, w := range out[n:] {
		starts = append(starts, int(uintptr(unsafe.Pointer(unsafe.StringData(w)))-uintptr(unsafe.Pointer(unsafe.StringData(s)))))
	}
	return out, starts
}

// appendWords appends the words of s (splitWords) to out. ASCII is judged
// byte by byte, the rest rune by rune (an invalid byte reads as U+FFFD,
// which is no letter, as in a range loop).
func appendWords(out []string, s string) []string {
	start := -1
	for i := 0; i < len(s); {
		c, size := s[i], 1
		var in bool
		if c < utf8.RuneSelf {
			in = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			in = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if in {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
