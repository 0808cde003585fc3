package notify

import (
	"bytes"
	"context"
	"encoding/base64"
	"math/rand/v2"
	"net/mail"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// Every notice a test of this package drafts is checked both from its
// parts and decoded (checkBuilt panics when they differ).
func init() { checkBuiltAgainstDecoded, checkQuickAgainstDigests = true, true }

// builtSegments, the draft's reader of the messages it writes, gives
// exactly the segments decodeMessage reads from the same message, for bodies and attachments that stress the transfer
// encodings: line breaks of every kind, trailing blanks, long lines, '=',
// control bytes, NULs (read as UTF-16 too), invalid UTF-8, non-ASCII.
func TestBuiltSegmentsMatchDecoding(t *testing.T) {
	long := strings.Repeat("word ", 40)
	bodies := []string{
		"", "x", "line\n", "a\r\nb\rc\nd\n\re\r\r\n", "trailing  \nblank\t\n end ", long + "\n" + strings.Repeat("=", 200),
		"nul\x00byte", "bad \xff\xfe utf-8", "Bêta Santé — «quoted» 日本語 " + long, "ctl \x01\x1b\x7f end", "=_alt_ boundary-like\n--=_mixed_x\n",
		strings.Repeat("y", 75) + " \n" + strings.Repeat("z", 76) + "=\n", ".\n.\r\n",
	}
	for i, body := range bodies {
		for _, att := range []*attachment{nil,
			{Name: "WAI-1-requests.csv", ContentType: "text/csv; charset=utf-8", Data: []byte(body)},
			{Name: "odd name;x=\"y\".csv", ContentType: "text/csv; charset=utf-8", Data: nil},
			{Name: "Bêta.csv", ContentType: "text/csv; charset=utf-8", Data: []byte("a,b\n")}, // falls back: non-ASCII name
		} {
			spec := emlSpec{From: mail.Address{Name: "Exämple \"Inc\"", Address: "a@b.example"}, To: []mail.Address{{Name: "Bêta", Address: "x@y.example"}},
				Subject: "s " + body, MessageID: "<m@x>", Lang: "en", Text: body, HTML: "<p>" + body + "</p><a href=\"mailto:q@r.example\">x</a>", Attachment: att}
			eml := buildEML(spec)
			got, ok := builtSegments(eml, nil)
			want, err := decodeMessage(eml)
			if err != nil { // the check fails it as "cannot be decoded": the shortcut must leave it to the decoder
				if ok {
					t.Errorf("body %d: decodeMessage fails (%v), builtSegments does not", i, err)
				}
				continue
			}
			if att != nil && att.Name == "Bêta.csv" {
				if ok {
					t.Errorf("body %d: a non-ASCII attachment name is not left to the decoder", i)
				}
				continue
			}
			if !ok || !slices.Equal(got, want) {
				t.Errorf("body %d, attachment %v: ok %v\nbuilt   %+v\ndecoded %+v", i, att != nil, ok, got, want)
			}
		}
	}
}

// Whatever is done to a notice's bytes, builtSegments either leaves the
// message to decodeMessage or reads exactly what decodeMessage reads: bytes
// changed, dropped, doubled, boundaries and escapes planted, line breaks
// of every kind, folded and broken headers.
func TestBuiltSegmentsMatchDecodingMutated(t *testing.T) {
	_, res := draftFixture(t)
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"\r", "\n", "\r\n", " ", "\t", "=", "=3D", "=3d", "=\r\n", "=4", "-", "--", ":", "\x00", "\xff", "\xc3\xa9", "A", "a=", "?=", "=?utf-8?q?x?=",
		"\r\n ", "\r\n\r\n", "Content-Type: text/html\r\n", "Content-Transfer-Encoding: base64\r\n", "; charset=latin1", "\"", ";", "QQ==", "====", "&amp;", "<p>", "T-Alpha"}
	fast, tried := 0, 0
	for _, n := range res.Notices {
		clean := []byte(readOutbox(t, res.Outbox, n.File))
		mixed, alt := emlBoundaries(n.MessageID)
		local := append(pieces, "--"+mixed, "\r\n--"+alt+"\r\n", "\r\n--"+mixed+"--", "--"+alt+"--")
		for range 150 {
			eml := slices.Clone(clean)
			for range 1 + r.IntN(3) {
				at := r.IntN(len(eml) + 1)
				switch r.IntN(4) {
				case 0: // replace a byte
					if at < len(eml) {
						eml = slices.Replace(eml, at, at+1, []byte(local[r.IntN(len(local))])...)
					}
				case 1: // insert
					eml = slices.Insert(eml, at, []byte(local[r.IntN(len(local))])...)
				case 2: // drop a few bytes
					eml = slices.Delete(eml, at, min(len(eml), at+1+r.IntN(4)))
				case 3: // double a stretch
					end := min(len(eml), at+r.IntN(80))
					eml = slices.Insert(eml, end, eml[at:end]...)
				}
			}
			tried++
			got, ok := builtSegments(eml, nil)
			if !ok {
				continue
			}
			fast++
			want, err := decodeMessage(eml)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s mutated: builtSegments reads it, decodeMessage %v\n%q\nbuilt   %+v\ndecoded %+v", n.File, err, eml, got, want)
			}
		}
		if got, ok := builtSegments(clean, nil); !ok {
			t.Fatalf("%s: builtSegments does not read a notice as drafted", n.File)
		} else if want, _ := decodeMessage(clean); !slices.Equal(got, want) {
			t.Fatalf("%s: builtSegments differs from decodeMessage", n.File)
		}
	}
	t.Logf("%d of %d mutated notices read by builtSegments", fast, tried)
	// Both ways taken often enough to mean something.
	if fast < tried/10 || fast > tried*9/10 {
		t.Fatalf("%d of %d mutated notices read by builtSegments", fast, tried)
	}
}

// The draft's in-memory check reads the bytes written, not the parts the
// renderer meant: a notice whose bytes are changed after it was built
// (another tenant's id in its text part's quoted-printable, or in its
// base64 attachment) is caught by checkBuilt, on the reader of buildEML's
// form (no fallback to the decoder).
func TestCheckBuiltReadsTheBytes(t *testing.T) {
	db, res := draftFixture(t)
	man, err := buildManifest(context.Background(), db, filepath.Join(t.TempDir(), textsName))
	if err != nil {
		t.Fatal(err)
	}
	files, err := readManifest(context.Background(), filepath.Join(res.Outbox, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	gamma := noticeFor(t, res, "t-gamma")
	clean := []byte(readOutbox(t, res.Outbox, gamma.File))
	spec := &emlSpec{MessageID: gamma.MessageID}
	own := files.numbers[gamma.File]
	if why := newChecker(man).checkBuilt(clean, spec, ownerKey("t-gamma"), own); len(why) != 0 {
		t.Fatalf("the clean notice fails: %q", why)
	}
	textStart := []byte("Content-Type: text/plain; charset=utf-8\r\n\r\n")
	at := bytes.Index(clean, textStart)
	if at < 0 {
		t.Fatal("no text part")
	}
	at += len(textStart)
	mixed, _ := emlBoundaries(gamma.MessageID)
	// The attachment's base64 re-encoded with a row of another tenant's.
	attEnd := bytes.LastIndex(clean, []byte("\r\n--"+mixed+"--"))
	attStart := bytes.LastIndex(clean[:attEnd], []byte("\r\n\r\n")) + 4
	data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(clean[attStart:attEnd]), "\r\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString(append(data, "r-a1,2026-09-01T10:00:00Z,exposed,confirmed\n"...))
	var lines []string
	for len(enc) > 76 {
		lines, enc = append(lines, enc[:76]), enc[76:]
	}
	lines = append(lines, enc)
	withRow := slices.Concat(clean[:attStart], []byte(strings.Join(lines, "\r\n")), clean[attEnd:])
	for name, eml := range map[string][]byte{
		"text part":  slices.Insert(slices.Clone(clean), at, []byte("See also T-Alpha.\r\n")...),
		"attachment": withRow,
	} {
		if _, ok := builtSegments(eml, nil); !ok {
			t.Fatalf("%s: the mutated notice is left to the decoder", name)
		}
		why := strings.Join(newChecker(man).checkBuilt(eml, spec, ownerKey("t-gamma"), own), "; ")
		if !strings.Contains(why, "another tenant's") {
			t.Fatalf("%s: the mutated notice passes the in-memory check: %q", name, why)
		}
	}
}

// appendWords, which judges ASCII byte by byte, splits exactly as a
// rune-by-rune scan does, whatever the bytes.
func TestAppendWordsMatchesRuneScan(t *testing.T) {
	runeScan := func(s string) []string {
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
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "Z", "0", "9", " ", "-", "_", "@", "\n", "é", "ß", "٣", "５", "日", "\xff", "\xc3", "\u00ad", "\u200b", "Ω", "\x00"}
	cases := randomStrings(r, alphabet, 2000, 20, "", "a", "T-Alpha t_alpha", "bad\xffbyte", "x\xc3", "٣٤ digits")
	for _, s := range cases {
		if got, want := appendWords([]string{"prefix"}, s)[1:], runeScan(s); !slices.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	}
}

// unitSpans gives exactly the units units gives of a line, in order, and
// each unit's words are the line's words inside its span, whatever the
// bytes: the draft's check relies on both.
func TestUnitSpansMatchUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "Z", "0", "9", " ", "  ", "\t", "-", "_", "@", ".", ",", ";", ":", "|", "(", ")", "[", "]", "{", "}", "<", ">", "\"",
		"«", "»", "“", "”", "„", "é", "ß", "٣", "日", "\xff", "\xc3", "\u00a0", "\u0085", "\u2003", "\u00ad", "\u200b", "Ω", "\x00", "ab", "t-1", "x@y.z"}
	cases := randomStrings(r, alphabet, 5000, 24, "", " ", "a", " t-alpha ", "Tenant: t-alpha (Alpha Labs)", "« Alpha »", "a,,b;  ;c", "\xffa-b\xff", "r-1, r-2: done.")
	for _, line := range cases {
		want := units(line)
		spans := unitSpans(line, nil)
		if len(spans) != len(want) {
			t.Fatalf("%q: %d spans, %d units: %+v / %+v", line, len(spans), len(want), spans, want)
		}
		w, starts := appendWordsAt(nil, nil, line)
		for i, sp := range spans {
			if got := line[sp.a:sp.b]; got != want[i].text || sp.token != want[i].token {
				t.Fatalf("%q: span %d is %q (token %v), unit is %q (token %v)", line, i, got, sp.token, want[i].text, want[i].token)
			}
			var inside []string
			for j, x := range w {
				if starts[j] >= sp.a && starts[j]+len(x) <= sp.b {
					inside = append(inside, x)
				} else if starts[j] < sp.b && starts[j]+len(x) > sp.a {
					t.Fatalf("%q: word %q straddles span %q", line, x, line[sp.a:sp.b])
				}
			}
			if sw := splitWords(want[i].text); !slices.Equal(inside, sw) {
				t.Fatalf("%q: span %q holds words %q, its text splits into %q", line, line[sp.a:sp.b], inside, sw)
			}
		}
	}
}

// randomStrings is fixed followed by n strings of up to maxParts-1 pieces
// of alphabet each, drawn from r.
func randomStrings(r *rand.Rand, alphabet []string, n, maxParts int, fixed ...string) []string {
	out := fixed
	for range n {
		var b strings.Builder
		for range r.IntN(maxParts) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		out = append(out, b.String())
	}
	return out
}

// A message of buildEML's form with more leaves than buildEML writes (two
// HTML parts, one with NULs, and text parts before and after) is read as
// decodeMessage reads it: each leaf in memory of its own.
func TestBuiltSegmentsManyLeaves(t *testing.T) {
	spec := emlSpec{From: mail.Address{Address: "a@b.example"}, Subject: "s", MessageID: "<many@x>", Lang: "en",
		Text: "first text", HTML: "<p>first &amp; html</p>", Attachment: &attachment{Name: "a.csv", ContentType: "text/csv; charset=utf-8", Data: []byte("x,y\n")}}
	eml := string(buildEML(spec))
	_, alt := emlBoundaries(spec.MessageID)
	htmlPart := "\r\n--" + alt + "\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
	at := strings.Index(eml, htmlPart)
	if at < 0 {
		t.Fatal("no html part")
	}
	extra := htmlPart + "<p>second <b>html</b> no entity</p>" + htmlPart + "<p>nul=00 html &lt;x&gt;</p>" +
		"\r\n--" + alt + "\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nmiddle text"
	eml = eml[:at] + extra + eml[at:]
	got, ok := builtSegments([]byte(eml), nil)
	want, err := decodeMessage([]byte(eml))
	if err != nil || !ok || !slices.Equal(got, want) {
		t.Fatalf("ok %v, decode error %v\nbuilt   %+v\ndecoded %+v", ok, err, got, want)
	}
	if len(want) < 12 {
		t.Fatalf("only %d segments: the extra parts were not read", len(want))
	}
}
