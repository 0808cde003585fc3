package notify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The isolation check proves, from the outbox alone, that a notice to one
// tenant holds no other tenant's id, name, email or request id, and no logged
// text. Draft writes a manifest holding only hashes: of each tenant's
// identifiers (as word sequences) and of word shingles of the logged texts
// of every request the analysis names. The check decodes each .eml (headers,
// quoted-printable/base64 parts, HTML with tags stripped, attachments) into
// lowercase words and hashes its word k-grams against the manifest.
//
// Words are maximal runs of letters and digits, lowercased, so "T-Alpha",
// "t_alpha" and "t alpha" are the same identifier. An identifier with no
// letter or digit cannot be matched and is skipped. Logged texts of fewer
// than minTextWords words are skipped (they are indistinguishable from
// ordinary words); longer ones are matched by shingles of shingleWords words
// (or whole, when shorter than a shingle).

const (
	manifestName  = "isolation.manifest"
	manifestMagic = "leakmap isolation manifest v1"
	shingleWords  = 6
	minTextWords  = 3
	// Texts longer than winnowAbove words keep winnowed shingles only.
	winnowAbove  = 1000
	winnowWindow = 8
	regulatorKey = "regulator"
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

// words splits s into lowercase runs of letters and digits.
func words(s string) []string {
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
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// manifest is the isolation manifest, in memory.
type manifest struct {
	notices map[string]string // file -> owner key ("regulator" for the regulator)
	files   []string          // sorted
	ids     map[digest][]idOwner
	ownIDs  map[string][]idEntry // owner -> its identifiers
	idKs    []int
	texts   map[digest]struct{}
	textKs  []int
}

type idOwner struct{ owner, kind string }

type idEntry struct {
	kind string
	k    int
	d    digest
}

func newManifest() *manifest {
	return &manifest{notices: map[string]string{}, ids: map[digest][]idOwner{},
		ownIDs: map[string][]idEntry{}, texts: map[digest]struct{}{}}
}

// addIdentifier records one identifier (tenant id, name, email, request id)
// of a tenant.
func (m *manifest) addIdentifier(x *hasher, tenantID, kind, value string) {
	w := words(value)
	if len(w) == 0 {
		return
	}
	owner := ownerKey(tenantID)
	d := x.kgram(w)
	for _, o := range m.ids[d] {
		if o.owner == owner && o.kind == kind {
			return
		}
	}
	m.ids[d] = append(m.ids[d], idOwner{owner, kind})
	m.ownIDs[owner] = append(m.ownIDs[owner], idEntry{kind, len(w), d})
	m.idKs = addK(m.idKs, len(w))
}

// addText records the shingles of one logged text.
func (m *manifest) addText(x *hasher, text string) {
	w := words(text)
	switch {
	case len(w) < minTextWords:
	case len(w) < shingleWords:
		m.texts[x.kgram(w)] = struct{}{}
		m.textKs = addK(m.textKs, len(w))
	case len(w) <= winnowAbove:
		for i := 0; i+shingleWords <= len(w); i++ {
			m.texts[x.kgram(w[i:i+shingleWords])] = struct{}{}
		}
		m.textKs = addK(m.textKs, shingleWords)
	default:
		// A long text (a logged 1M-token prompt has ~750k words) keeps
		// only the winnowed shingles: the smallest hash of every window
		// of winnowWindow consecutive shingles (Schleimer et al., 2003).
		// Any run of winnowWindow+shingleWords-1 words of it still holds
		// a kept shingle, so the check catches it; shorter runs often.
		n := len(w) - shingleWords + 1
		ds := make([]digest, n)
		for i := range ds {
			ds[i] = x.kgram(w[i : i+shingleWords])
		}
		last := -1
		for start := 0; start+winnowWindow <= n; start++ {
			best := start
			for j := start + 1; j < start+winnowWindow; j++ {
				if bytes.Compare(ds[j][:], ds[best][:]) <= 0 { // rightmost minimum, as in the paper
					best = j
				}
			}
			if best != last {
				m.texts[ds[best]] = struct{}{}
				last = best
			}
		}
		m.textKs = addK(m.textKs, shingleWords)
	}
}

func addK(ks []int, k int) []int {
	for _, v := range ks {
		if v == k {
			return ks
		}
	}
	ks = append(ks, k)
	sort.Ints(ks)
	return ks
}

// write saves the manifest in a sorted, line-oriented text form.
func (m *manifest) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "%s\nshingle %d\n", manifestMagic, shingleWords)
	for _, file := range m.files {
		fmt.Fprintf(w, "notice %s %s\n", file, m.notices[file])
	}
	owners := make([]string, 0, len(m.ownIDs))
	for o := range m.ownIDs {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	for _, o := range owners {
		entries := append([]idEntry(nil), m.ownIDs[o]...)
		sort.Slice(entries, func(i, j int) bool {
			if entries[i].kind != entries[j].kind {
				return entries[i].kind < entries[j].kind
			}
			return bytes.Compare(entries[i].d[:], entries[j].d[:]) < 0
		})
		for _, e := range entries {
			fmt.Fprintf(w, "id %s %s %d %x\n", o, e.kind, e.k, e.d[:])
		}
	}
	// Texts carry their k-gram length so the check knows which k to try.
	texts := make([]digest, 0, len(m.texts))
	for d := range m.texts {
		texts = append(texts, d)
	}
	sort.Slice(texts, func(i, j int) bool { return bytes.Compare(texts[i][:], texts[j][:]) < 0 })
	fmt.Fprintf(w, "textks %s\n", joinInts(m.textKs))
	for _, d := range texts {
		fmt.Fprintf(w, "text %x\n", d[:])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func joinInts(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// readManifest loads an outbox's manifest.
func readManifest(path string) (*manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("isolation manifest: %w", err)
	}
	defer f.Close()
	m := newManifest()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	bad := func(msg string) error { return fmt.Errorf("%s:%d: %s", filepath.Base(path), line, msg) }
	parseDigest := func(s string) (digest, bool) {
		var d digest
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != len(d) {
			return d, false
		}
		copy(d[:], b)
		return d, true
	}
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if line == 1 {
			if sc.Text() != manifestMagic {
				return nil, bad("not a leakmap isolation manifest")
			}
			continue
		}
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "shingle":
			if len(f) != 2 || f[1] != strconv.Itoa(shingleWords) {
				return nil, bad("shingle size differs from this leakmap's")
			}
		case "notice":
			if len(f) != 3 {
				return nil, bad("notice: want file and owner")
			}
			m.notices[f[1]] = f[2]
			m.files = append(m.files, f[1])
		case "id":
			if len(f) != 5 {
				return nil, bad("id: want owner, kind, k, hash")
			}
			k, err := strconv.Atoi(f[3])
			d, ok := parseDigest(f[4])
			if err != nil || k < 1 || !ok {
				return nil, bad("id: bad k or hash")
			}
			m.ids[d] = append(m.ids[d], idOwner{f[1], f[2]})
			m.ownIDs[f[1]] = append(m.ownIDs[f[1]], idEntry{f[2], k, d})
			m.idKs = addK(m.idKs, k)
		case "textks":
			if len(f) != 2 {
				return nil, bad("textks: want a list")
			}
			if f[1] != "-" {
				for _, s := range strings.Split(f[1], ",") {
					k, err := strconv.Atoi(s)
					if err != nil || k < 1 {
						return nil, bad("textks: bad k")
					}
					m.textKs = addK(m.textKs, k)
				}
			}
		case "text":
			d, ok := parseDigest(f[1])
			if len(f) != 2 || !ok {
				return nil, bad("text: bad hash")
			}
			m.texts[d] = struct{}{}
		default:
			return nil, bad(fmt.Sprintf("unknown record %q", f[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty", filepath.Base(path))
	}
	sort.Strings(m.files)
	return m, nil
}

// CheckFailure is one notice that fails the isolation check.
type CheckFailure struct {
	File   string // relative to the outbox
	Reason string // never quotes the offending text
}

// CheckResult is the outcome of the isolation check over an outbox.
type CheckResult struct {
	Checked  int
	Failures []CheckFailure
}

// Check runs the isolation check on every .eml of an outbox, from the outbox
// alone (its isolation manifest and the files). A notice that is not in the
// manifest, or a manifest entry whose file is missing, is a failure too.
func Check(outbox string) (*CheckResult, error) {
	m, err := readManifest(filepath.Join(outbox, manifestName))
	if err != nil {
		return nil, err
	}
	return checkOutbox(outbox, m)
}

func checkOutbox(outbox string, m *manifest) (*CheckResult, error) {
	entries, err := os.ReadDir(outbox)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	onDisk := map[string]bool{}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".eml") {
			files = append(files, e.Name())
			onDisk[e.Name()] = true
		}
	}
	sort.Strings(files)
	res := &CheckResult{Checked: len(files)}
	// Notices are independent: one checker (and line cache) per worker.
	// The manifest is only read.
	reasons := make([]string, len(files))
	errsOut := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), 8); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newChecker(m)
			for i := range next {
				name := files[i]
				owner, ok := m.notices[name]
				if !ok {
					reasons[i] = "not listed in the isolation manifest: cannot tell whose notice it is"
					continue
				}
				data, err := os.ReadFile(filepath.Join(outbox, name))
				if err != nil {
					errsOut[i] = fmt.Errorf("outbox: %w", err)
					continue
				}
				reasons[i] = strings.Join(c.checkMessage(data, owner), "; ")
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, name := range files {
		if errsOut[i] != nil {
			return nil, errsOut[i]
		}
		if reasons[i] != "" {
			res.Failures = append(res.Failures, CheckFailure{name, reasons[i]})
		}
	}
	for _, name := range m.files {
		if !onDisk[name] {
			res.Failures = append(res.Failures, CheckFailure{name, "listed in the isolation manifest but missing from the outbox"})
		}
	}
	sort.SliceStable(res.Failures, func(i, j int) bool { return res.Failures[i].File < res.Failures[j].File })
	return res, nil
}

// checker tests messages against a manifest. Most lines of a notice are
// template text shared by thousands of notices, so the k-gram hits of each
// line are cached by the line's text; only k-grams that cross a line
// boundary are hashed for every message.
type checker struct {
	m     *manifest
	x     *hasher
	ks    []int // every k to try: identifier and text lengths
	lines map[string][]hit
}

// hit is a k-gram of a line (or segment) found in the manifest.
type hit struct {
	pos, k int
	d      digest
	text   bool // a logged-text shingle, else an identifier
}

func newChecker(m *manifest) *checker {
	c := &checker{m: m, x: newHasher(), lines: map[string][]hit{}}
	for _, k := range m.idKs {
		c.ks = addK(c.ks, k)
	}
	for _, k := range m.textKs {
		c.ks = addK(c.ks, k)
	}
	return c
}

// hitsAt tests the k-gram w[i:i+k] against the manifest.
func (c *checker) hitsAt(w []string, i, k int, out []hit) []hit {
	d := c.x.kgram(w[i : i+k])
	if _, ok := c.m.ids[d]; ok {
		out = append(out, hit{pos: i, k: k, d: d})
	}
	if _, ok := c.m.texts[d]; ok {
		out = append(out, hit{pos: i, k: k, d: d, text: true})
	}
	return out
}

// lineHits returns the hits of the k-grams inside one line, cached.
func (c *checker) lineHits(line string, w []string) []hit {
	if hs, ok := c.lines[line]; ok {
		return hs
	}
	var hs []hit
	for _, k := range c.ks {
		for i := 0; i+k <= len(w); i++ {
			hs = c.hitsAt(w, i, k, hs)
		}
	}
	if len(c.lines) >= 1<<20 {
		clear(c.lines)
	}
	c.lines[line] = hs
	return hs
}

// segment is one decoded piece of a message: its headers, or one part.
type segment struct {
	label string
	text  string
}

// checkMessage returns the reasons a message fails, or none.
func (c *checker) checkMessage(data []byte, owner string) []string {
	segs, err := decodeMessage(data)
	if err != nil {
		return []string{"cannot be decoded: " + err.Error()}
	}
	var reasons []string
	more := 0
	add := func(r string) {
		if len(reasons) < 5 {
			reasons = append(reasons, r)
		} else {
			more++
		}
	}
	for _, seg := range segs {
		var w []string
		var lineOf []int
		var hits []hit
		for li, line := range strings.Split(seg.text, "\n") {
			lw := words(line)
			for _, h := range c.lineHits(line, lw) {
				h.pos += len(w)
				hits = append(hits, h)
			}
			w = append(w, lw...)
			for range lw {
				lineOf = append(lineOf, li)
			}
		}
		// k-grams that span lines are not in any line's cache.
		for _, k := range c.ks {
			for i := 0; i+k <= len(w); i++ {
				if lineOf[i] != lineOf[i+k-1] {
					hits = c.hitsAt(w, i, k, hits)
				}
			}
		}
		// Mask the owner's own identifiers first: "acme" inside the
		// owner's own "acme labs" is not another tenant's "acme".
		masked := make([]bool, len(w))
		for _, h := range hits {
			if h.text {
				continue
			}
			for _, o := range c.m.ids[h.d] {
				if o.owner == owner {
					for j := h.pos; j < h.pos+h.k; j++ {
						masked[j] = true
					}
					break
				}
			}
		}
		sort.Slice(hits, func(i, j int) bool { return hits[i].pos < hits[j].pos })
		textSeen := false
		for _, h := range hits {
			if h.text {
				if !textSeen {
					textSeen = true // one report per part: a quoted prompt has many shingles
					add(fmt.Sprintf("%s, word %d: logged text (prompt or response)", seg.label, h.pos+1))
				}
				continue
			}
			if allMasked(masked[h.pos : h.pos+h.k]) {
				continue
			}
			for _, o := range c.m.ids[h.d] {
				if o.owner != owner {
					add(fmt.Sprintf("%s, word %d: another tenant's %s", seg.label, h.pos+1, kindLabel(o.kind)))
					break
				}
			}
		}
	}
	if more > 0 {
		reasons = append(reasons, fmt.Sprintf("and %d more", more))
	}
	return reasons
}

func allMasked(m []bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

func kindLabel(kind string) string {
	return strings.ReplaceAll(kind, "_", " ")
}

// decodeMessage splits a message into its decoded headers and leaf parts.
func decodeMessage(data []byte) ([]segment, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	dec := &mime.WordDecoder{}
	keys := make([]string, 0, len(msg.Header))
	for k := range msg.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var hb strings.Builder
	for _, k := range keys {
		for _, v := range msg.Header[k] {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
			hb.WriteString(k + ": " + v + "\n")
		}
	}
	segs := []segment{{"headers", hb.String()}}
	err = decodePart(&segs, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body, 0)
	return segs, err
}

func decodePart(segs *[]segment, ctype, cte, disposition string, body io.Reader, depth int) error {
	if depth > 8 {
		return fmt.Errorf("MIME nesting too deep")
	}
	if ctype == "" {
		ctype = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("content-type %q: %w", ctype, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := decodePart(segs, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1); err != nil {
				return err
			}
		}
	}
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &newlineStripper{r: body})
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s part: %w", mt, err)
	}
	label := mt + " part"
	if disposition != "" {
		if _, dp, err := mime.ParseMediaType(disposition); err == nil && dp["filename"] != "" {
			label = "attachment " + dp["filename"]
		}
	}
	text := string(b)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, " ")
	}
	if mt == "text/html" {
		// The visible text (tags as spaces), and the inside of the tags,
		// whose attributes (href, alt, title) could carry an identifier.
		*segs = append(*segs, segment{label + " (markup)", html.UnescapeString(tagInteriors(text))})
		text = html.UnescapeString(stripTags(text))
	}
	*segs = append(*segs, segment{label, text})
	// Names of attachments are words of the message too.
	if label != mt+" part" {
		*segs = append(*segs, segment{label + " (name)", label})
	}
	return nil
}

// stripTags replaces each HTML tag by a space, so a tag cannot split an
// identifier into pieces the check would miss ("r<b>-</b>17" reads "r - 17").
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// tagInteriors returns the inside of every HTML tag, one per line.
func tagInteriors(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			return b.String()
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s[i+1:])
			return b.String()
		}
		b.WriteString(s[i+1 : i+j])
		b.WriteByte('\n')
		s = s[i+j+1:]
	}
}

// newlineStripper drops CR and LF so base64 lines decode as one stream.
type newlineStripper struct{ r io.Reader }

func (n *newlineStripper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}
