package notify

import (
	"context"
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"T-Alpha", "t-alpha"},
		{"t-al\u00ADpha", "t-alpha"},             // soft hyphen
		{"t-alp\u200Dha", "t-alpha"},             // zero-width joiner
		{"r-a\u200B1\u2060", "r-a1"},             // zero-width space, word joiner
		{"ｔ－ａｌｐｈａ", "t-alpha"},                   // fullwidth
		{"t-\u0430lph\u0430", "t-alpha"},         // Cyrillic а
		{"\u0392\u0395\u03a4\u0391", "beta"},     // Greek capitals
		{"Be\u0302ta Sante\u0301", "beta sante"}, // combining accents
		{"Bêta Santé", "beta sante"},
		{"ﬁnance", "finance"},    // ligature
		{"𝐚𝐥𝐩𝐡𝐚", "alpha"},       // mathematical bold
		{"\u202Eahpla", "ahpla"}, // bidi override is dropped, not obeyed
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if !slices.Equal(words("T-Al\u00ADpha"), words("t alpha")) {
		t.Error("words differ after normalising")
	}
}

// A hand-edited notice hides another tenant's identifier from a plain text
// search; notify check, from the outbox alone, still finds it.
func TestCheckSeesThroughDisguises(t *testing.T) {
	_, res := draftFixture(t)
	gamma := noticeFor(t, res, "t-gamma").File
	clean := readOutbox(t, res.Outbox, gamma)
	text := func(s string) func(string) string {
		return func(raw string) string {
			return string(rebuild(t, raw, func(p *parsedMail) { p.text += "\n" + s + "\n" }))
		}
	}
	html := func(s string) func(string) string {
		return func(raw string) string { return string(rebuild(t, raw, func(p *parsedMail) { p.html += s })) }
	}
	tests := []struct {
		name string
		edit func(raw string) string
		want string
	}{
		{"soft hyphen", text("see t-al\u00ADpha"), "tenant id"},
		{"zero-width joiner", text("see t-alp\u200Dha"), "tenant id"},
		{"zero-width space in a request id", text("see r-a\u200B1"), "request id"},
		{"fullwidth", text("see ｔ－ａｌｐｈａ"), "tenant id"},
		{"Cyrillic homoglyphs", text("see t-\u0430lph\u0430"), "tenant id"},
		{"Greek homoglyphs in a name", text("\u0391lpha \u0391nalytics"), "name"},
		{"accents dropped", text("Beta Sante"), "name"},
		{"tag split", html("<p>t-al<b></b>pha</p>"), "tenant id"},
		{"comment split", html("<p>t-del<!-- x -->ta</p>"), "tenant id"},
		{"entities", html("<p>t-&#97;lp&#x68;a</p>"), "tenant id"},
		{"UTF-16 part", addPart("text/plain; charset=utf-16", "base64", b64(utf16BE("note: t-alpha"))), "tenant id"},
		{"UTF-16 bytes labelled otherwise", addPart("application/octet-stream", "base64", b64(utf16LE("t-beta"))), "tenant id"},
		{"Latin-1 part", addPart("text/plain; charset=iso-8859-1", "quoted-printable", "B=EAta Sant=E9"), "name"},
		{"encoded-word header", addHeader("X-Note: =?iso-8859-1?q?B=EAta_Sant=E9?="), "name"},
		{"attached message", addPart("message/rfc822", "7bit", "Subject: fwd\r\n\r\nsee r-d9\r\n"), "request id"},
		{"part name", addPart(`text/plain; name="t-delta.txt"`, "7bit", "x"), "tenant id"},
		{"unknown charset fails closed", addPart("text/plain; charset=x-unheard-of", "7bit", "x"), "cannot be decoded"},
		{"unknown transfer encoding fails closed", addPart("text/plain", "x-uuencode", "x"), "cannot be decoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, res.Outbox, gamma, tt.edit(clean))
			got, err := Check(context.Background(), res.Outbox)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Failures) != 1 || got.Failures[0].File != gamma || !strings.Contains(got.Failures[0].Reason, tt.want) {
				t.Fatalf("got %+v, want one failure of %s mentioning %q", got.Failures, gamma, tt.want)
			}
		})
	}
	// Adding an innocent part of each kind does not fail the check.
	for _, edit := range []func(string) string{
		addPart("text/plain; charset=utf-16", "base64", b64(utf16BE("note: nothing here"))),
		addPart("text/plain; charset=iso-8859-1", "quoted-printable", "r=E9sum=E9"),
		html("<p>Gamma Games, t-gam<b></b>ma</p>"),
	} {
		writeFile(t, res.Outbox, gamma, edit(clean))
		if got, _ := Check(context.Background(), res.Outbox); len(got.Failures) != 0 {
			t.Errorf("innocent edit fails: %+v", got.Failures)
		}
	}
	os.WriteFile(filepath.Join(res.Outbox, gamma), []byte(clean), 0o644)
}

var boundaryRE = regexp.MustCompile(`boundary="([^"]+)"`)

// addPart inserts a part at the end of a message's outer multipart.
func addPart(ctype, cte, body string) func(string) string {
	return func(raw string) string {
		b := boundaryRE.FindStringSubmatch(raw)[1]
		end := "--" + b + "--"
		part := "--" + b + "\r\nContent-Type: " + ctype + "\r\nContent-Transfer-Encoding: " + cte + "\r\n\r\n" + body + "\r\n"
		return strings.Replace(raw, end, part+end, 1)
	}
}

func addHeader(h string) func(string) string {
	return func(raw string) string { return h + "\r\n" + raw }
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func utf16BE(s string) []byte {
	out := []byte{0xFE, 0xFF}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u>>8), byte(u))
	}
	return out
}

func utf16LE(s string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// TestNormalizeLatin: normalize's table for Latin text gives what
// Unicode's forms give, for every code point below U+0250 alone and
// beside its neighbours, and for random texts of them (with now and then
// a code point past the table, where the table must step aside).
func TestNormalizeLatin(t *testing.T) {
	for r := rune(0); r < 0x250; r++ {
		for _, s := range []string{string(r), "A" + string(r) + "b", string(r) + string(r+1) + string(r)} {
			if got, ok := normalizeLatin(s); ok && got != normalizeUnicode(s) {
				t.Fatalf("normalize(%q): the table gives %q, Unicode's forms %q", s, got, normalizeUnicode(s))
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	past := []rune{0x300, 0x301, 0x327, 0x3b1, 0x430, 0x1100, 0x1161, 0x200b, 0xff41, 0xfffd}
	taken := 0
	for range 20000 {
		rs := make([]rune, 1+rng.IntN(12))
		for i := range rs {
			switch n := rng.IntN(50); {
			case n == 0:
				rs[i] = past[rng.IntN(len(past))]
			case n < 20:
				rs[i] = rune(0x20 + rng.IntN(0x5f))
			default:
				rs[i] = rune(0x80 + rng.IntN(0x250-0x80))
			}
		}
		s := string(rs)
		got, ok := normalizeLatin(s)
		if !ok {
			continue
		}
		taken++
		if want := normalizeUnicode(s); got != want {
			t.Fatalf("normalize(%q): the table gives %q, Unicode's forms %q", s, got, want)
		}
	}
	if taken < 10000 {
		t.Errorf("the table took %d random texts of 20,000, want most", taken)
	}
	for _, s := range []string{"Bêta Société Générale", "ÉTÉ À L'ŒUVRE", "déjà vu: ǅemal"} {
		if _, ok := normalizeLatin(s); !ok {
			t.Errorf("normalize(%q): the table stepped aside", s)
		}
	}
}
