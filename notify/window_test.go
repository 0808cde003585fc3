package notify

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A long segment checked a window of lines at a time gives the reasons it
// gives checked whole, in the same order, with the same count beyond the
// first five: with windows of one byte to many lines, by the quick check
// and the digest check, in an attachment and in running text. The
// segments hold other tenants' identifiers and logged text split over
// lines, the owner's identifiers that mask another's inside them, generic
// ones standing alone, and few or many of each, so that a window cut in
// the middle of any of them, a k-gram found twice by two windows, or a
// masking k-gram a window does not hold would change the reasons.
func TestWindowsGiveTheWholeSegmentsReasons(t *testing.T) {
	m := newManifest()
	x := newHasher()
	add := func(tenant, kind, value string) {
		if err := m.addIdentifier(x, tenant, kind, value); err != nil {
			t.Fatal(err)
		}
	}
	add("t-other", "tenant_name", "Zyx Quorra Vell Tamsin Orbit Lake")
	add("t-other", "email", "ops@quorra.example")
	add("t-other", "request_id", "r-7731-quorra")
	add("t-other", "tenant_id", "48213")
	add("t-third", "tenant_name", "Orbit Lake")
	add("t-self", "tenant_name", "Orbit Lake Zyx Quorra Vell Tamsin Orbit Lake Holdings")
	add("t-self", "request_id", "r-0001-self")
	add("t-self", "email", "ops@self-orbit")
	add("t-self", "tenant_name", "Lake Harbour Quay Tamsin West Vell Holdings Group Ltd")
	logged := "the quarterly figures of the northern unit were revised twice before the audit and then sent to the board"
	m.addText(x, logged)
	if err := m.sealTexts(""); err != nil {
		t.Fatal(err)
	}
	defer m.close()

	pieces := []string{
		"Zyx Quorra Vell Tamsin Orbit Lake",                     // another's name
		"Orbit Lake Zyx Quorra Vell Tamsin Orbit Lake Holdings", // the owner's, which masks it
		"Orbit Lake", // a third tenant's, unless masked
		// "Orbit Lake" masked by two of the owner's: one ending at its
		// first word, one starting at its second and ending far after.
		"ops@self-orbit Lake Harbour Quay Tamsin West Vell Holdings Group Ltd",
		"ops@quorra.example", "r-7731-quorra", "r-0001-self",
		"48213",   // generic: a hit standing alone in the attachment
		"r-48213", // joined
		logged,
		"figures of the northern unit were revised twice before", // a part of the text
	}
	filler := strings.Fields("request 2026 09 14t10 11 12z affected exposed probable possible none yes no the of and lake orbit quorra vell")
	r := rand.New(rand.NewPCG(3, 4))
	segmentOf := func(lines, hits int) string {
		var words []string
		for range lines * 6 {
			words = append(words, filler[r.IntN(len(filler))])
		}
		for range hits {
			at := r.IntN(len(words) + 1)
			words = slices.Insert(words, at, strings.Fields(pieces[r.IntN(len(pieces))])...)
		}
		// Lines of one to nine words, split anywhere (inside the
		// identifiers too), some empty.
		var b strings.Builder
		for i := 0; i < len(words); {
			n := r.IntN(10)
			if n == 0 {
				b.WriteString("\n")
				continue
			}
			end := min(len(words), i+n)
			sep := " "
			if r.IntN(4) == 0 {
				sep = ","
			}
			b.WriteString(strings.Join(words[i:end], sep))
			b.WriteString("\n")
			i = end
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	defer func(old int) { checkWindowBytes = old }(checkWindowBytes)
	tried, many := 0, 0
	for _, size := range [][2]int{{400, 0}, {400, 1}, {400, 3}, {2000, 40}, {3000, 200}} {
		for round := range 4 {
			text := segmentOf(size[0], size[1])
			for _, kind := range []segKind{segAttachment, segProse} {
				segs := []segment{{"headers", "Subject: 48213 notice", segHeaders}, {"attachment", text, kind}, {"tail", "Orbit\nLake", segProse}}
				for _, quick := range []bool{true, false} {
					checkWindowBytes = 1 << 40
					whole := newCheckerQuick(m, quick).segmentReasons(segs, ownerKey("t-self"), numberSet{"48213": true})
					if len(whole) > 5 {
						many++
					}
					for _, win := range []int{1, 2, 7, 60, 500, 4096} {
						checkWindowBytes = win
						got := newCheckerQuick(m, quick).segmentReasons(segs, ownerKey("t-self"), numberSet{"48213": true})
						if !slices.Equal(got, whole) {
							t.Fatalf("%d lines, %d hits, round %d, kind %d, quick %v, window %d bytes:\nwindows %q\nwhole   %q", size[0], size[1], round, kind, quick, win, got, whole)
						}
						tried++
					}
				}
			}
		}
	}
	if many == 0 {
		t.Fatal("no segment gave more than five reasons: the count beyond them is not tested")
	}
	t.Logf("%d windowed checks, %d segments with more than five reasons", tried, many)
}
