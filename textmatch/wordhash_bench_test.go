package textmatch

import (
	"strings"
	"testing"
)

// BenchmarkShingles hashes a prompt-sized text of English with some
// accented words, as the fingerprinting does for every logged text.
func BenchmarkShingles(b *testing.B) {
	text := strings.Repeat("Please summarise the quarterly figures of unit 42 for the board: revenue, margin and the café's été forecast. ", 6)
	var sh, words []uint64
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		sh, words = Shingles(text, sh[:0], words)
	}
}
