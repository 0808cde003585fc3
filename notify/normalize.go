package notify

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normalize folds text the way a reader sees it, so that an identifier
// dressed up to look the same to a person is the same to the check: format
// characters (soft hyphen, zero-width space and joiners, bidi marks) and
// other invisible code points removed; compatibility forms folded by NFKC
// (fullwidth "ｔ－ａｌｐｈａ", ligatures, mathematical letters);
// diacritics dropped ("Bêta" and "Beta"); Cyrillic and Greek letters that
// look like Latin ones written as those ("аlphа" with Cyrillic а), and
// lowercased. Identifiers and logged texts go through it when the manifest
// is built, notices when they are checked.
func normalize(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	if f, ok := normalizeLatin(s); ok {
		return f
	}
	return normalizeUnicode(s)
}

// normalizeUnicode is normalize by Unicode's forms, for any text.
func normalizeUnicode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	// NFKD folds the compatibility forms and splits accents into marks
	// to drop.
	for _, r := range norm.NFKD.String(s) {
		if invisible(r) || unicode.Is(unicode.Mn, r) {
			continue
		}
		if l, ok := confusable[r]; ok {
			r = l
		}
		b.WriteRune(unicode.ToLower(r))
	}
	// Only Hangul jamo and the like recompose: the marks are gone.
	return norm.NFC.String(b.String())
}

// latinFold holds normalize of each code point from U+0080 to U+024F
// (Latin-1 and Latin Extended, the accented letters of the catalogues'
// languages), "" where it cannot stand for the code point in a text (its
// form reaches past U+024F). Within that range normalize of a text is its
// code points' forms one after the other: the marks NFKD splits off are
// all dropped (no reordering is left to tell), and no form left composes
// with the next under NFC (only Hangul jamo and a few Indic vowel signs
// do, past U+024F). TestNormalizeLatin compares the two on every code
// point and on random texts.
var latinFold [0x250 - 0x80]string

func fillLatinFold() {
	for r := rune(0x80); r < 0x250; r++ {
		f := normalizeUnicode(string(r))
		ok := f != ""
		for _, c := range f {
			ok = ok && c < 0x250
		}
		if ok {
			latinFold[r-0x80] = f
		}
	}
}

// normalizeLatin is normalize of s when every code point of s is below
// U+0250 with a form in latinFold (ok), without Unicode's forms.
func normalizeLatin(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80:
			c := byte(r)
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		case r < 0x250 && latinFold[r-0x80] != "":
			b = append(b, latinFold[r-0x80]...)
		default:
			return "", false
		}
	}
	return unsafeString(b), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// invisible code points: format characters (Cf: soft hyphen, ZWSP, ZWJ,
// ZWNJ, word joiner, bidi controls, BOM), variation selectors, the
// combining grapheme joiner and the Hangul fillers, none of which a reader
// sees.
func invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r):
		return true
	case r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x180E:
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return false
}

// confusable maps letters of other scripts that look like a Latin letter
// to it, by case (uppercase Greek Eta looks like H, lowercase eta like n).
// A subset of Unicode's confusables (UTS #39) for the Cyrillic and Greek
// letters, Latin small capitals and dotless i.
var confusable = map[rune]rune{}

func init() {
	pairs := []string{
		// Cyrillic uppercase, lowercase
		"АA", "ВB", "ЕE", "ЅS", "ІI", "ЈJ", "КK", "МM", "НH", "ОO", "РP", "СC", "ТT", "УY", "ХX", "ԌG", "ԚQ", "ԜW", "ҮY", "ӀI",
		"аa", "вb", "еe", "ѕs", "іi", "јj", "кk", "мm", "нh", "оo", "рp", "сc", "тt", "уy", "хx", "һh", "ԁd", "ԛq", "ԝw", "үy", "ӏl", "ьb", "пn", "гr", "ҽe", "ѵv",
		// Greek uppercase, lowercase
		"ΑA", "ΒB", "ΕE", "ΖZ", "ΗH", "ΙI", "ΚK", "ΜM", "ΝN", "ΟO", "ΡP", "ΤT", "ΥY", "ΧX",
		"αa", "βb", "γy", "εe", "ηn", "ιi", "κk", "νv", "οo", "ρp", "τt", "υu", "χx", "ωw", "ϲc", "ϳj",
		// Latin look-alikes NFKC leaves alone
		"ıi", "ȷj", "ɑa", "ɡg", "ᴀa", "ʙb", "ᴄc", "ᴅd", "ᴇe", "ɢg", "ʜh", "ɪi", "ᴊj", "ᴋk", "ʟl", "ᴍm", "ɴn", "ᴏo", "ᴘp", "ʀr", "ꜱs", "ᴛt", "ᴜu", "ᴠv", "ᴡw", "ʏy", "ᴢz",
	}
	for _, p := range pairs {
		rs := []rune(p)
		confusable[rs[0]] = rs[1]
	}
	fillLatinFold() // by normalizeUnicode: after the confusables
}
