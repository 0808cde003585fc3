package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"unicode"
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
func splitWords(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
