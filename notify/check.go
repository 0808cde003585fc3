package notify

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

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
// It stops when ctx is done (at 100M requests it takes minutes).
func Check(ctx context.Context, outbox string) (*CheckResult, error) {
	m, err := readManifest(ctx, filepath.Join(outbox, manifestName))
	if err != nil {
		return nil, err
	}
	defer m.close()
	return checkOutbox(ctx, outbox, m)
}

// CheckCase runs the isolation check on an outbox with the manifest rebuilt
// from the case database (the analysis, and the directory and provider the
// draft recorded), instead of trusting the outbox's own copy. An outbox
// manifest that differs from the rebuilt one (edited, or the case analysed
// again since the draft) is a failure too.
func CheckCase(ctx context.Context, db *sql.DB, outbox string) (*CheckResult, error) {
	// The rebuilt texts file goes beside the outbox, not in the system's
	// temporary directory (often in memory): at 10M requests it is 0.6 GB.
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(outbox)), ".leakmap-check-")
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	defer os.RemoveAll(tmp)
	m, err := caseManifest(ctx, db, filepath.Join(tmp, textsName))
	if err != nil {
		return nil, err
	}
	defer m.close()
	res, err := checkOutbox(ctx, outbox, m)
	if err != nil {
		return nil, err
	}
	if !sameAsWritten(filepath.Join(outbox, manifestName), m) || !sameFiles(filepath.Join(outbox, textsName), filepath.Join(tmp, textsName)) {
		res.Failures = append(res.Failures, CheckFailure{manifestName,
			"differs from the manifest rebuilt from the case database (edited, or the case changed since the draft): redraft the notices"})
		sort.SliceStable(res.Failures, func(i, j int) bool { return res.Failures[i].File < res.Failures[j].File })
	}
	return res, nil
}

// sameAsWritten says whether the file at path holds the manifest m writes,
// byte for byte (false too when it cannot be read). The two are compared
// as m is written, a piece at a time: at 10M requests a manifest is 1.6
// GB, and both copies were held in memory at once.
func sameAsWritten(path string, m *manifest) bool {
	return sameAs(path, m.writeTo)
}

// sameAs says whether the file at path holds what write writes, byte for
// byte (false too when either fails), compared a piece at a time.
func sameAs(path string, write func(io.Writer) error) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	cmp := &sameBytes{r: bufio.NewReaderSize(f, 1<<20)}
	if err := write(cmp); err != nil || cmp.differ {
		return false
	}
	var one [1]byte
	n, err := cmp.r.Read(one[:])
	return n == 0 && err == io.EOF
}

// sameBytes is a writer that compares what it is given with r's next bytes.
type sameBytes struct {
	r      io.Reader
	buf    []byte
	differ bool // a byte differed, or r ended or failed first
}

func (s *sameBytes) Write(p []byte) (int, error) {
	if s.differ {
		return len(p), nil
	}
	if cap(s.buf) < len(p) {
		s.buf = make([]byte, len(p))
	}
	b := s.buf[:len(p)]
	if _, err := io.ReadFull(s.r, b); err != nil || !bytes.Equal(b, p) {
		s.differ = true
	}
	return len(p), nil
}

func checkOutbox(ctx context.Context, outbox string, m *manifest) (*CheckResult, error) {
	defer boundGCHeadroom()()
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
				reasons[i] = strings.Join(c.checkMessage(data, owner, m.numbers[name]), "; ")
			}
		}()
	}
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.readErr(); err != nil {
		return nil, err
	}
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
	m *manifest
	// quick: the manifest's quick set (quick.go) is used, and then no line
	// cache is needed: a k-gram costs its cheap hash and, almost always,
	// one read of the set's cached Bloom filter. Without it (a manifest
	// read from a file), every k-gram and unit is hashed with SHA-256, and
	// the hits of each line are cached by the line's text.
	quick bool
	x     *hasher
	idsc  idScratch          // for lookups in an identifiers' table on disk
	idc   map[digest][]idRec // their results lately (idsOf)
	// own: the records of ownOf, the notice's owner, sorted by digest,
	// when the table is on disk (loadOwn).
	own       []idRec
	ownOf     uint32
	ownLoaded bool
	ks        []int // every k to try: identifier and text lengths
	// textK, idK: the k-gram lengths of the texts and of the identifiers
	// (kBit), so that a k-gram is tested only against a set that has
	// k-grams of its length: at 10M requests the texts' quick filter is
	// 128 MiB, a cache miss each.
	textK, idK uint64
	lines      map[string][]hit
	units      map[string][]unitInfo
	unitWords  []string // lineUnits' words of one unit, reused
	norm       map[string]string

	// A segment's words, their cheap hashes (quick), their lines, hits,
	// mask, units and prose flags, and a line's word offsets and unit
	// spans, reused from segment to segment: fewer allocations mean fewer
	// GC cycles, each of which scans the whole manifest.
	ws       []string
	wh       []uint64
	lineOf   []int
	hits     []hit
	masked   []bool
	us       []unitInfo
	prose    []bool
	starts   []int
	spans    []span
	toks     []span
	lineAt   []lineStart
	shadow   *checker // checkQuickAgainstDigests
	wlines   []wordLine
	cross    crossCache
	crossKey []uint64
	built    builtScratch
	kw       []string // segWords
	recent   lineCache
	lineIDs  uint64 // the last lineFacts.id given
	neg      negCache
	block    []byte // a block of the texts file (textSet.has)
	textMiss digestMisses
}

// negCache remembers the cheap hashes of k-grams lately found not in the
// quick set, direct-mapped in 128 KiB: the k-grams that span two of the
// templates' lines come back in every notice, and this table stays in the
// core's own cache where the quick set's filter (1 MiB at 100,000
// notices) does not. The set is sealed before any checker is made
// (newCheckerQuick): what was absent stays absent.
type negCache struct {
	slots []uint64 // 0: empty
}

const negCacheSlots = 1 << 14

func (nc *negCache) known(h uint64) bool {
	if nc.slots == nil {
		nc.slots = make([]uint64, negCacheSlots)
		return false
	}
	return h != 0 && nc.slots[h&(negCacheSlots-1)] == h
}

func (nc *negCache) add(h uint64) { nc.slots[h&(negCacheSlots-1)] = h }

// wordLine is a line of a segment that has words: its facts and where its
// words start among the segment's.
type wordLine struct {
	f     *lineFacts
	start int
}

// crossLineHits appends the hits of the k-grams that span lines. Those
// that start in one line with words, A, depend only on A and on the lines
// with words after it, as far as the longest k-gram reaches (or to the
// window's end): the hits are found once for such a run of lines
// (crossCache: the templates' lines follow one another the same way in
// thousands of notices, and an HTML part's markup is a line per tag, so
// most of its k-grams span three lines or more). The hits' order does not
// matter: segmentInto sorts them.
func (c *checker) crossLineHits(wh []uint64, lines []wordLine, hits []hit) []hit {
	maxK := c.longestK()
	for j := 0; j+1 < len(lines); j++ {
		a := lines[j]
		// The run: A's id, then the lines after it until they hold the
		// longest k-gram's other words.
		key := append(c.crossKey[:0], a.f.id)
		for x, need := j+1, maxK-1; x < len(lines) && need > 0; x++ {
			key = append(key, lines[x].f.id)
			need -= len(lines[x].f.w)
		}
		c.crossKey = key
		e := c.cross.slot(key)
		if !slices.Equal(e.key, key) {
			e.key = append(e.key[:0], key...)
			e.hits = e.hits[:0]
			endA := a.start + len(a.f.w)
			for _, k := range c.ks {
				for i := max(a.start, endA-k+1); i < endA; i++ {
					if i+k <= len(wh) {
						n := len(e.hits)
						e.hits = c.hitsAt(nil, wh, i, k, e.hits)
						for x := n; x < len(e.hits); x++ {
							e.hits[x].pos -= a.start
						}
					}
				}
			}
		}
		for _, h := range e.hits {
			h.pos += a.start
			hits = append(hits, h)
		}
	}
	return hits
}

// longestK is the length in words of the checker's longest k-gram.
func (c *checker) longestK() int {
	k := 0
	for _, x := range c.ks {
		k = max(k, x)
	}
	return k
}

// crossCache holds the hits of the k-grams that leave a line, by the run
// of lines they read (crossLineHits), direct-mapped: an entry is written
// over by the next run its slot gets. Runs name lines by id, so it keeps
// no line alive.
type crossCache struct {
	slots []crossHits
}

type crossHits struct {
	key  []uint64 // the lines' ids, the first the one the k-grams leave
	hits []hit    // pos from that line's first word
}

const crossCacheBits = 13

const crossCacheSlots = 1 << crossCacheBits

func (cc *crossCache) slot(key []uint64) *crossHits {
	if cc.slots == nil {
		cc.slots = make([]crossHits, crossCacheSlots)
	}
	h := uint64(len(key))
	for _, id := range key {
		h = (h ^ id) * 0x9e3779b97f4a7c15
	}
	return &cc.slots[h>>(64-crossCacheBits)]
}

// lineFacts is what the quick check finds in one line: its normalised
// words and their cheap hashes, its generic units, and the hits of the
// k-grams inside it (pos from the line's first word).
type lineFacts struct {
	raw   string // the line as written (the cache's key)
	w     []string
	wh    []uint64
	units []unitInfo
	hits  []hit
	// The line that last followed this one (any line, with words or
	// not). A pointer: it keeps at most that line alive past the cache,
	// and it the line after it, until this line is followed by another.
	succ *lineFacts
	id   uint64 // unique within the checker, from 1 (crossCache's keys)
}

// lineFactsOf finds the facts of one line as written (lineHits and
// lineUnits, with the quick set).
func (c *checker) lineFactsOf(raw string) *lineFacts {
	c.lineIDs++
	f := &lineFacts{id: c.lineIDs, raw: strings.Clone(raw)} // the cache must not hold the segment
	// normalize returns its argument or a new string: the line is the
	// clone's, not the segment's, without a second copy.
	line := normalize(f.raw)
	c.starts = c.starts[:0]
	f.w, c.starts = appendWordsAt(nil, c.starts, line)
	f.wh = make([]uint64, len(f.w))
	for i, x := range f.w {
		f.wh[i] = wordHash(x)
	}
	f.units = c.appendQuickUnits(nil, line, f.w, f.wh, c.starts)
	for _, k := range c.ks {
		for i := 0; i+k <= len(f.w); i++ {
			f.hits = c.hitsAt(f.w, f.wh, i, k, f.hits)
		}
	}
	return f
}

// lineCache holds the facts of the lines seen lately, in two generations
// of at most lineCacheSize lines: when the current one is full it becomes
// the old one, and a line found there moves back to the current one. The
// templates' lines stay; the lines only one notice has (its own figures,
// names and request ids) leave after two generations. A small cache: the
// shared caches of millions of lines cost a cache miss each.
type lineCache struct {
	cur, old map[string]*lineFacts
}

const lineCacheSize = 8192

func (lc *lineCache) get(line string) *lineFacts {
	if f, ok := lc.cur[line]; ok {
		return f
	}
	if f, ok := lc.old[line]; ok {
		lc.put(line, f)
		return f
	}
	return nil
}

func (lc *lineCache) put(line string, f *lineFacts) {
	if lc.cur == nil || len(lc.cur) >= lineCacheSize {
		lc.old, lc.cur = lc.cur, make(map[string]*lineFacts, lineCacheSize)
	}
	lc.cur[line] = f
}

// hit is a k-gram of a line (or segment) found in the manifest.
type hit struct {
	pos, k int
	d      digest
	text   bool // a logged-text shingle, else an identifier
}

func newChecker(m *manifest) *checker { return newCheckerQuick(m, m.ids.fromClear) }

// newCheckerQuick is newChecker, told whether to use the manifest's quick
// set (the tests check with and without it, and compare).
func newCheckerQuick(m *manifest, quick bool) *checker {
	c := &checker{m: m, quick: quick && m.ids.fromClear, x: newHasher(), lines: map[string][]hit{}, units: map[string][]unitInfo{}, norm: map[string]string{}}
	m.ids.seal()
	for _, k := range m.ids.ks {
		c.ks = addK(c.ks, k)
		c.idK |= kBit(k)
	}
	for _, k := range m.textKs {
		c.ks = addK(c.ks, k)
		c.textK |= kBit(k)
	}
	return c
}

// kBit is k's bit in a set of k-gram lengths; every k from 63 up shares
// the last one.
func kBit(k int) uint64 { return 1 << min(k, 63) }

// hitsAt tests the k-gram w[i:i+k] against the manifest; wh is w's cheap
// word hashes when the manifest has a quick set. With the quick set, w nil
// is the words of the segment being checked (segWords): they are read only
// for the rare k-gram whose cheap hash is in the set.
func (c *checker) hitsAt(w []string, wh []uint64, i, k int, out []hit) []hit {
	maybeText, maybeID := c.textK&kBit(k) != 0, c.idK&kBit(k) != 0
	if c.quick {
		h := seqHash(wh[i : i+k])
		if c.neg.known(h) {
			return out
		}
		maybeText = maybeText && c.m.texts.mayHaveQuick(h)
		maybeID = maybeID && c.m.ids.mayHaveQuick(h)
		if !maybeText && !maybeID {
			c.neg.add(h)
			return out // not a k-gram of the manifest: no SHA-256, no probe
		}
	}
	var kw []string
	if w == nil {
		kw = c.segWords(i, k)
	} else {
		kw = w[i : i+k]
	}
	d := c.x.kgram(kw)
	// The filters turn away most k-grams: one bit read instead of a
	// probe of a map of millions of entries, or a block of the texts read.
	if maybeID && (c.quick || c.m.ids.mayHold(d)) {
		if len(c.idsOf(d)) > 0 {
			out = append(out, hit{pos: i, k: k, d: d})
		}
	}
	if maybeText && (c.quick || c.m.texts.mayHold(d)) && c.textsHave(d) {
		out = append(out, hit{pos: i, k: k, d: d, text: true})
	}
	return out
}

// textsHave says whether the texts file holds d, reading a block of it
// unless d is one the checker read for lately and did not find. The
// filters let through a few k-grams of the templates themselves (about 1
// in 400), and those come back in every notice: at 50,000 notices the
// reads of the blocks for them were a tenth of the draft's CPU, most of it
// in pread.
func (c *checker) textsHave(d digest) bool {
	if c.textMiss.known(d) {
		return false
	}
	if c.m.texts.has(d, &c.block) {
		return true
	}
	if c.m.texts.Err() == nil { // a block not read says nothing
		c.textMiss.add(d)
	}
	return false
}

// digestMisses is a direct-mapped set of digests lately found absent from
// the texts file, which does not change while a checker uses it.
type digestMisses struct {
	slots []digest
}

const digestMissSlots = 1 << 12

func (m *digestMisses) known(d digest) bool {
	return m.slots != nil && d != (digest{}) && m.slots[digestKey(d)&(digestMissSlots-1)] == d
}

func (m *digestMisses) add(d digest) {
	if m.slots == nil {
		m.slots = make([]digest, digestMissSlots)
	}
	m.slots[digestKey(d)&(digestMissSlots-1)] = d
}

// segWords returns the words i..i+k of the segment being checked by the
// quick path, read from its lines' facts (c.wlines), in a reused slice:
// the quick path does not copy every line's words into one slice.
func (c *checker) segWords(i, k int) []string {
	out := c.kw[:0]
	j := sort.Search(len(c.wlines), func(j int) bool { return c.wlines[j].start > i }) - 1
	for ; len(out) < k; j++ {
		wl := c.wlines[j]
		off := i + len(out) - wl.start
		out = append(out, wl.f.w[off:min(len(wl.f.w), off+k-len(out))]...)
	}
	c.kw = out
	return out
}

// digestCacheLines bounds the digest check's caches by line: the
// templates' lines are a few thousand, and a large attachment's lines,
// each its own, would otherwise fill them to a million of each (hundreds
// of MB on each core).
const digestCacheLines = 1 << 16

// lineHits returns the hits of the k-grams inside one line, cached (the
// check without the quick set: there are no cheap hashes).
func (c *checker) lineHits(line string, w []string) []hit {
	if hs, ok := c.lines[line]; ok {
		return hs
	}
	var hs []hit
	for _, k := range c.ks {
		for i := 0; i+k <= len(w); i++ {
			hs = c.hitsAt(w, nil, i, k, hs)
		}
	}
	if len(c.lines) >= digestCacheLines {
		clear(c.lines)
	}
	c.lines[line] = hs
	return hs
}

// segment is one decoded piece of a message: its headers, or one part.
type segment struct {
	label string
	text  string
	kind  segKind
}

type segKind int

const (
	segHeaders    segKind = iota
	segProse              // a text or HTML body part: the templates' words, dates and counts
	segAttachment         // data only: every cell is a value
)

// checkMessage returns the reasons a message fails, or none. own is the
// numbers the notice's own facts write (ownnumbers.go).
func (c *checker) checkMessage(data []byte, owner string, own numberSet) []string {
	segs, err := decodeMessage(data)
	if err != nil {
		return []string{"cannot be decoded: " + err.Error()}
	}
	return c.checkSegments(segs, owner, own)
}

// checkBuilt is checkMessage of eml, the message buildEML wrote for spec,
// decoded by the reader of buildEML's form (builtSegments) where it can
// (spec names the notice in a test's panic only).
func (c *checker) checkBuilt(eml []byte, spec *emlSpec, owner string, own numberSet) []string {
	segs, ok := builtSegments(eml, &c.built)
	if checkBuiltAgainstDecoded {
		decoded, err := decodeMessage(eml)
		if ok && (err != nil || !slices.Equal(segs, decoded)) {
			panic(fmt.Sprintf("builtSegments differs from decodeMessage for %s:\nbuilt   %+v\ndecoded %+v (%v)", spec.MessageID, segs, decoded, err))
		}
	}
	if !ok {
		return c.checkMessage(eml, owner, own)
	}
	if !c.quick {
		segs = ownedSegments(segs)
	}
	return c.checkSegments(segs, owner, own)
}

// ownedSegments is segs with texts of their own: the digest check's caches
// keep the lines they are given, and builtSegments' texts may be a reused
// buffer's (the quick check clones what it keeps).
func ownedSegments(segs []segment) []segment {
	out := slices.Clone(segs)
	for i := range out {
		out[i].text = strings.Clone(out[i].text)
	}
	return out
}

// checkBuiltAgainstDecoded makes checkBuilt decode every message too and
// panic when the two disagree: set by the package's tests, so that every
// notice any test drafts proves the shortcut.
var checkBuiltAgainstDecoded bool

// checkQuickAgainstDigests makes a checker that uses the quick set check
// every message again without it (SHA-256 of every k-gram and unit, line
// caches) and panic when the two disagree: set by the package's tests.
var checkQuickAgainstDigests bool

func (c *checker) checkSegments(segs []segment, owner string, own numberSet) []string {
	reasons := c.segmentReasons(segs, owner, own)
	if c.quick && checkQuickAgainstDigests {
		if c.shadow == nil {
			c.shadow = newCheckerQuick(c.m, false)
		}
		if slow := c.shadow.segmentReasons(ownedSegments(segs), owner, own); !slices.Equal(slow, reasons) {
			panic(fmt.Sprintf("the quick check differs from the digest check:\nquick  %q\ndigest %q", reasons, slow))
		}
	}
	return reasons
}

func (c *checker) segmentReasons(segs []segment, owner string, own numberSet) []string {
	var reasons []string
	more := 0
	add := func(r string) {
		if len(reasons) < 5 {
			reasons = append(reasons, r)
		} else {
			more++
		}
	}
	self := c.m.ids.owner(owner)
	c.loadOwn(self)
	for _, seg := range segs {
		var units, hits firstReasons
		c.segmentInto(seg, self, owner, own, &units, &hits)
		// A segment's standalone identifiers are reported before its
		// k-grams, as they were when a segment was checked whole.
		for _, r := range [2]*firstReasons{&units, &hits} {
			for _, s := range r.first {
				add(s)
			}
			more += r.n - len(r.first)
		}
	}
	if more > 0 {
		reasons = append(reasons, fmt.Sprintf("and %d more", more))
	}
	return reasons
}

// firstReasons is the first reasons of one kind a segment gives, and how
// many it gives: a message reports five at most.
type firstReasons struct {
	first []string
	n     int
}

func (r *firstReasons) add(s string) {
	if len(r.first) < 5 {
		r.first = append(r.first, s)
	}
	r.n++
}

// checkWindowBytes is how much of a segment is checked at once: a large
// tenant's attachment (110 MB of CSV at 100M requests) is checked a window
// of lines at a time, so that its words' hashes, positions and masks are
// never all held (a variable for the tests).
var checkWindowBytes = 1 << 20

// segmentInto checks one segment, a window of lines at a time, and adds
// its reasons to unitR (other tenants' identifiers standing alone, in line
// order) and hitR (k-grams, by position). The reasons are those of the
// segment checked whole: a window reads on, past the words it reports,
// until it holds every k-gram that could mask one of them (twice the
// longest k-gram), and the next window starts far enough back to hold
// every k-gram that could mask its first one.
func (c *checker) segmentInto(seg segment, self uint32, owner string, own numberSet, unitR, hitR *firstReasons) {
	quick := c.quick
	margin := max(0, c.longestK()-1)
	var seen map[digest]bool // standalone identifiers reported in this segment
	textSeen := false        // one report per part: a quoted prompt has many shingles
	// The window's first line: its byte offset, its index among the
	// segment's lines and the index of its first word. Positions below
	// ownFrom were reported by an earlier window, and the units of lines
	// below unitsDone.
	from, line0, word0, ownFrom, unitsDone := 0, 0, 0, 0, 0
	for {
		w, wh, lineOf, hits := c.ws[:0], c.wh[:0], c.lineOf[:0], c.hits[:0]
		units := c.us[:0]    // generic identifiers standing alone, in the window's new lines
		prose := c.prose[:0] // per line: running text, where bare numbers are checked
		wlines := c.wlines[:0]
		lineAt := c.lineAt[:0] // per line: its byte offset and first word
		var prev *lineFacts    // the line before, in the quick path
		end := false
		li := 0
		for rest, at := seg.text[from:], from; ; li++ {
			raw, after, more := strings.Cut(rest, "\n")
			prose = append(prose, seg.kind == segProse || seg.kind == segHeaders && len(raw) >= 8 && strings.EqualFold(raw[:8], "subject:"))
			n := len(w) + len(wh) // the words so far (the quick path leaves w empty, the other wh)
			lineAt = append(lineAt, lineStart{at, n})
			newLine := line0+li >= unitsDone
			if quick {
				// Most lines are the templates' own, the same in
				// thousands of notices: their facts are cached by the
				// line as written, in a small cache. A template line is
				// mostly followed by the same line as the last time:
				// that one is compared first, which spares hashing the
				// line for the cache.
				var f *lineFacts
				if prev != nil && prev.succ != nil && prev.succ.raw == raw {
					f = prev.succ
				} else {
					if f = c.recent.get(raw); f == nil {
						f = c.lineFactsOf(raw)
						c.recent.put(f.raw, f)
					}
					if prev != nil {
						prev.succ = f
					}
				}
				prev = f
				if len(f.w) > 0 {
					wlines = append(wlines, wordLine{f, n})
				}
				wh = append(wh, f.wh...)
				if newLine {
					units = append(units, f.units...)
				}
				for _, h := range f.hits {
					h.pos += n
					hits = append(hits, h)
				}
			} else {
				line := c.normLine(raw)
				if newLine {
					units = append(units, c.lineUnits(line)...)
				}
				w = appendWords(w, line)
				for _, h := range c.lineHits(line, w[n:]) {
					h.pos += n
					hits = append(hits, h)
				}
			}
			nw := len(w) + len(wh)
			for range nw - n {
				lineOf = append(lineOf, li)
			}
			if !more {
				end = true
				break
			}
			at += len(raw) + 1
			rest = after
			if at-from >= checkWindowBytes && nw-(ownFrom-word0) > 2*margin {
				li++
				lineAt = append(lineAt, lineStart{at, nw}) // the next line, not read
				break
			}
		}
		c.us, c.prose, c.wlines, c.lineAt = units, prose, wlines, lineAt
		// k-grams that span lines are not in any line's cache.
		nw := len(w)
		if quick {
			hits = c.crossLineHits(wh, wlines, hits)
			nw = len(wh)
		} else {
			for _, k := range c.ks {
				for i := 0; i+k <= len(w); i++ {
					if lineOf[i] != lineOf[i+k-1] {
						hits = c.hitsAt(w, wh, i, k, hits)
					}
				}
			}
		}
		// Mask the owner's own identifiers first: "acme" inside the
		// owner's own "acme labs" is not another tenant's "acme".
		masked := slices.Grow(c.masked[:0], nw)[:nw]
		clear(masked)
		c.ws, c.wh, c.lineOf, c.hits, c.masked = w, wh, lineOf, hits, masked
		for _, h := range hits {
			if h.text {
				continue
			}
			for _, o := range c.idsOf(h.d) {
				if o.owner == self {
					for j := h.pos; j < h.pos+h.k; j++ {
						masked[j] = true
					}
					break
				}
			}
		}
		// By position, then length, identifiers first: one order, however
		// the segment is cut into windows.
		slices.SortFunc(hits, func(a, b hit) int {
			if a.pos != b.pos {
				return a.pos - b.pos
			}
			if a.k != b.k {
				return a.k - b.k
			}
			return boolCmp(a.text, b.text)
		})
		if len(units) > 0 {
			if seen == nil {
				seen = map[digest]bool{}
			}
			c.unitHits(seg, units, owner, seen, unitR.add)
		}
		ownTo := nw // the window reports the k-grams that start before it
		if !end {
			ownTo = nw - 2*margin
		}
		for _, h := range hits {
			if h.pos < ownFrom-word0 || h.pos >= ownTo {
				continue
			}
			if h.text {
				if !textSeen {
					textSeen = true
					hitR.add(fmt.Sprintf("%s, word %d: logged text (prompt or response)", seg.label, word0+h.pos+1))
				}
				continue
			}
			if allMasked(masked[h.pos : h.pos+h.k]) {
				continue
			}
			// A generic identifier is matched only as a whole unit
			// (unitHits), except an all-number one in running text (the
			// body, the subject): there any number that is not one the
			// notice writes itself is a hit (ownnumbers.go).
			if c.isGenericID(h.d) {
				var hw []string
				if quick {
					hw = c.segWords(h.pos, h.k)
				} else {
					hw = w[h.pos : h.pos+h.k]
				}
				if !prose[lineOf[h.pos]] || !allNumbers(hw) || own.covers(hw) {
					continue
				}
			}
			for _, o := range c.idsOf(h.d) {
				if o.owner != self {
					hitR.add(fmt.Sprintf("%s, word %d: another tenant's %s", seg.label, word0+h.pos+1, kindLabel(c.m.ids.kinds[o.kind])))
					break
				}
			}
		}
		if end {
			return
		}
		// The next window starts at the line of the first word a k-gram
		// masking its first reported word could hold.
		next := li // the first line not read
		if first := max(0, ownTo-margin); first < nw {
			next = lineOf[first]
		}
		unitsDone = line0 + li
		from, line0, word0, ownFrom = lineAt[next].at, line0+next, word0+lineAt[next].word, word0+ownTo
	}
}

// lineStart is where a line of a window starts: its byte offset in the
// segment, and its first word's index in the window.
type lineStart struct{ at, word int }

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// unitInfo is a unit of a line that is a generic identifier of the manifest.
type unitInfo struct {
	d              digest
	numeric, token bool
}

// normLine normalises one line of a decoded segment, cached: most lines are
// the templates' own, the same in thousands of notices.
func (c *checker) normLine(line string) string {
	if isASCII(line) {
		return normalize(line)
	}
	if n, ok := c.norm[line]; ok {
		return n
	}
	n := normalize(line)
	if len(c.norm) >= digestCacheLines {
		clear(c.norm)
	}
	c.norm[line] = n
	return n
}

// lineUnits returns the units of a normalised line that are generic
// identifiers of the manifest (usually none), cached by the line.
func (c *checker) lineUnits(line string) []unitInfo {
	if c.m.ids.generics == 0 {
		return nil
	}
	if us, ok := c.units[line]; ok {
		return us
	}
	var us []unitInfo
	for _, u := range units(line) {
		c.unitWords = appendWords(c.unitWords[:0], u.text) // not kept past the unit
		w := c.unitWords
		if len(w) == 0 || len(w) > maxUnitWords {
			continue
		}
		if !c.m.ids.mayHaveQuick(seqHashWords(w)) {
			continue // not an identifier of the manifest
		}
		if d := c.x.kgram(w); c.isGenericID(d) {
			us = append(us, unitInfo{d: d, numeric: vocabulary(nil).ordinary(w), token: u.token})
		}
	}
	if len(c.units) >= digestCacheLines {
		clear(c.units)
	}
	c.units[line] = us
	return us
}

// unitHits reports the generic identifiers of other tenants that stand
// alone in a segment: a line, a list item, a table or CSV cell, an address,
// a joined token. The templates' own units never count in the headers and
// body (an other tenant named like a heading of the notice is that heading);
// a bare number in the body is a date or a count, so a numeric identifier
// counts there only when joined ("r-2026"), and anywhere in the attachment.
//
// seen holds the identifiers already reported in the segment (its earlier
// windows), one report each.
func (c *checker) unitHits(seg segment, units []unitInfo, owner string, seen map[digest]bool, add func(string)) {
	if len(units) == 0 {
		return
	}
	_, static := builtin()
	for _, u := range units {
		if seen[u.d] {
			continue
		}
		if seg.kind != segAttachment && static[u.d] {
			continue
		}
		if seg.kind == segProse && u.numeric && !u.token {
			continue
		}
		foreign := ""
		self := c.m.ids.owner(owner)
		for _, o := range c.idsOf(u.d) {
			if o.owner == self {
				foreign = ""
				break
			}
			if foreign == "" {
				foreign = c.m.ids.kinds[o.kind]
			}
		}
		if foreign != "" {
			seen[u.d] = true
			add(fmt.Sprintf("%s: another tenant's %s, standing alone", seg.label, kindLabel(foreign)))
		}
	}
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

// appendQuickUnits is lineUnits for the quick path, uncached: a unit's
// words are the line's words inside its span (a span begins and ends next
// to a character that is no letter or digit, or at the line's ends), so
// their cheap hashes are at hand. starts is each word's offset in line.
func (c *checker) appendQuickUnits(out []unitInfo, line string, lw []string, lwh []uint64, starts []int) []unitInfo {
	if c.m.ids.generics == 0 || len(lw) == 0 {
		return out
	}
	c.spans, c.toks = appendUnitSpans(line, c.spans[:0], c.toks)
	for _, sp := range c.spans {
		i, _ := slices.BinarySearch(starts, sp.a)
		j := i
		for j < len(lw) && j-i <= maxUnitWords && starts[j]+len(lw[j]) <= sp.b {
			j++
		}
		if j == i || j-i > maxUnitWords {
			continue
		}
		if !c.m.ids.mayHaveQuick(seqHash(lwh[i:j])) {
			continue // not an identifier of the manifest
		}
		w := lw[i:j]
		if d := c.x.kgram(w); c.isGenericID(d) {
			out = append(out, unitInfo{d: d, numeric: vocabulary(nil).ordinary(w), token: sp.token})
		}
	}
	return out
}
