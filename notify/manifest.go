package notify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/queries"
)

// manifest is the isolation manifest, in memory.
type manifest struct {
	notices map[string]string    // file -> owner key ("regulator" for the regulator)
	numbers map[string]numberSet // file -> the numbers its own facts write
	// numberText: file -> the String form of the numbers its own facts
	// write, where the draft made it already; the draft keeps only this
	// for its tenant notices (numbers checks a notice read back).
	numberText map[string]string
	files      []string // sorted
	// ids: every identifier of every tenant (ids.go).
	ids idTable
	// texts: the logged texts' shingles, once sealed (texts.go); textb
	// gathers them until then.
	texts  *textSet
	textb  textBuilder
	textKs []int
	// vocab decides which identifiers are generic (generic.go): made only
	// of ordinary words, matched only as whole units.
	vocab vocabulary

	// The last tenant and its owner key: the identifiers come sorted by
	// tenant, and the key is a SHA-256.
	lastTenant, lastOwner string
}

func newManifest() *manifest {
	return &manifest{notices: map[string]string{}, numbers: map[string]numberSet{}, numberText: map[string]string{}, ids: idTable{fromClear: true}}
}

// reserve makes room for n more notices: at 100,000 the maps grown an
// entry at a time were most of the serial step that records them.
func (m *manifest) reserve(n int) {
	if len(m.notices) == 0 && len(m.numberText) == 0 {
		m.notices, m.numberText = make(map[string]string, n), make(map[string]string, n)
	}
	m.files = slices.Grow(m.files, n)
}

// addIdentifier records one identifier (tenant id, name, email, request id)
// of a tenant.
func (m *manifest) addIdentifier(x *hasher, tenantID, kind, value string) error {
	w := words(value)
	if len(w) == 0 {
		return nil
	}
	if m.lastOwner == "" || tenantID != m.lastTenant {
		m.lastTenant, m.lastOwner = tenantID, ownerKey(tenantID)
	}
	generic := m.vocab.ordinary(w) && len(w) <= maxUnitWords
	return m.ids.add(m.lastOwner, kind, len(w), x.kgram(w), generic, seqHashWords(w))
}

// addText records the shingles of one logged text (sealTexts sorts them
// into the manifest's texts file).
func (m *manifest) addText(x *hasher, text string) {
	if k := shingles(x, words(text), m.textb.add); k > 0 {
		m.textKs = addK(m.textKs, k)
	}
}

// shingles calls emit with the digest and cheap hash of each shingle kept
// of a logged text's words, and returns their length in words (0: none).
func shingles(x *hasher, w []string, emit func(digest, uint64)) int {
	switch {
	case len(w) < minTextWords:
		return 0
	case len(w) < shingleWords:
		emit(x.kgram(w), seqHashWords(w))
		return len(w)
	case len(w) <= winnowAbove:
		for i := 0; i+shingleWords <= len(w); i++ {
			emit(x.kgram(w[i:i+shingleWords]), seqHashWords(w[i:i+shingleWords]))
		}
		return shingleWords
	}
	// A long text (a logged 1M-token prompt has ~750k words) keeps only
	// the winnowed shingles: the smallest hash of every window of
	// winnowWindow consecutive shingles (Schleimer et al., 2003). Any run
	// of winnowWindow+shingleWords-1 words of it still holds a kept
	// shingle, so the check catches it; shorter runs often.
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
			emit(ds[best], seqHashWords(w[best:best+shingleWords]))
			last = best
		}
	}
	return shingleWords
}

// sealTexts sorts the texts added into the file at path ("": kept in
// memory, for a test's small manifest) and opens it for the check.
func (m *manifest) sealTexts(path string) error {
	t, err := m.textb.finish(path)
	m.textb = textBuilder{}
	m.texts = t
	return err
}

// close closes the manifest's texts file and removes its identifiers'.
func (m *manifest) close() error {
	m.ids.close()
	return m.texts.close()
}

// readErr is the first error reading the texts file or the identifiers'
// met by a check: its result is not to be trusted then.
func (m *manifest) readErr() error { return errors.Join(m.texts.Err(), m.ids.Err()) }

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
	if m.texts == nil {
		return errors.New("isolation manifest: the texts are not sealed")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := errors.Join(m.writeTo(w), w.Flush()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (m *manifest) writeTo(w io.Writer) error {
	// Appended to one buffer, not printed line by line: a manifest of
	// 100,000 notices has about a million lines.
	b := make([]byte, 0, 1<<16)
	flush := func() {
		if len(b) >= 1<<16-256 {
			w.Write(b)
			b = b[:0]
		}
	}
	b = append(b, manifestMagic+"\nshingle "...)
	b = strconv.AppendInt(b, shingleWords, 10)
	b = append(b, '\n')
	for _, file := range slices.Sorted(slices.Values(m.files)) {
		b = append(b, "notice "...)
		b = append(b, file...)
		b = append(b, ' ')
		b = append(b, m.notices[file]...)
		b = append(b, ' ')
		if t, ok := m.numberText[file]; ok {
			b = append(b, t...)
		} else {
			b = append(b, m.numbers[file].String()...)
		}
		b = append(b, '\n')
		flush()
	}
	if err := m.ids.seal(); err != nil {
		return err
	}
	err := m.ids.byOwner(func(e idRec) error {
		scope := "words"
		if e.generic {
			scope = "unit"
		}
		b = append(b, "id "...)
		b = append(b, m.ids.owners[e.owner]...)
		b = append(b, ' ')
		b = append(b, m.ids.kinds[e.kind]...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.k), 10)
		b = append(b, ' ')
		b = hex.AppendEncode(b, e.d[:])
		b = append(b, ' ')
		b = append(b, scope...)
		b = append(b, '\n')
		flush()
		return nil
	})
	if err != nil {
		return err
	}
	// The texts' k-gram lengths, so the check knows which k to try, and
	// their file (texts.go): its shingles and SHA-256.
	b = append(b, "textks "+joinInts(m.textKs)+"\n"...)
	b = append(b, "texts "...)
	b = strconv.AppendInt(b, m.texts.n, 10)
	b = append(b, ' ')
	b = hex.AppendEncode(b, m.texts.sum[:])
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
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
func readManifest(ctx context.Context, path string) (*manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("isolation manifest: %w", err)
	}
	defer f.Close()
	// The texts file (7.3 GB at 100M requests) is read through on another
	// core while this one reads the manifest, which records its size and
	// SHA-256 at its end.
	scanned := make(chan textsScan, 1)
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	go func() { scanned <- scanTexts(filepath.Join(filepath.Dir(path), textsName), &stop) }()
	verified := false
	m, err := parseManifest(ctx, f, path, func(n int64, sum [sha256.Size]byte) (*textSet, error) {
		verified = true
		t, err := (<-scanned).verify(n, sum)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err() // the scan stopped for it
		}
		return t, err
	})
	if !verified {
		stop.Store(true)
		(<-scanned).close()
	}
	return m, err
}

// parseManifest reads a manifest from f (at path), and then its texts file
// from texts, given what the manifest records of it.
func parseManifest(ctx context.Context, f io.Reader, path string, texts func(n int64, sum [sha256.Size]byte) (*textSet, error)) (*manifest, error) {
	m := newManifest()
	m.ids.fromClear = false // digests only: the check hashes every k-gram with SHA-256
	m.ids.dir = filepath.Dir(path)
	// Its identifiers' files go on any error.
	kept := false
	defer func() {
		if !kept {
			m.ids.close()
		}
	}()
	var (
		textsN    int64
		textsSum  [sha256.Size]byte
		textsSeen bool
	)
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
		if line%(1<<16) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f := strings.Fields(sc.Text())
		if line == 1 {
			if sc.Text() != manifestMagic {
				if strings.HasPrefix(sc.Text(), "leakmap isolation manifest ") {
					return nil, bad("written by another leakmap version: redraft the notices")
				}
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
			if len(f) != 4 {
				return nil, bad("notice: want file, owner and own numbers")
			}
			nums, ok := parseNumberSet(f[3])
			if !ok {
				return nil, bad("notice: bad own numbers")
			}
			m.notices[f[1]] = f[2]
			m.numbers[f[1]] = nums
			m.files = append(m.files, f[1])
		case "id":
			if len(f) != 6 || (f[5] != "words" && f[5] != "unit") {
				return nil, bad("id: want owner, kind, k, hash, scope (words or unit)")
			}
			k, err := strconv.Atoi(f[3])
			d, ok := parseDigest(f[4])
			if err != nil || k < 1 || !ok {
				return nil, bad("id: bad k or hash")
			}
			if err := m.ids.add(f[1], f[2], k, d, f[5] == "unit", 0); err != nil {
				return nil, bad("id: " + err.Error())
			}
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
		case "texts":
			var sum []byte
			if len(f) == 3 {
				sum, _ = hex.DecodeString(f[2])
			}
			n, err := strconv.ParseInt(f[min(1, len(f)-1)], 10, 64)
			if len(f) != 3 || err != nil || n < 0 || len(sum) != len(textsSum) || textsSeen {
				return nil, bad("texts: want one record of the shingles and the SHA-256 of " + textsName)
			}
			textsN, textsSeen = n, true
			copy(textsSum[:], sum)
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
	if !textsSeen {
		return nil, fmt.Errorf("%s: no texts record", filepath.Base(path))
	}
	if err := m.ids.seal(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var err error
	if m.texts, err = texts(textsN, textsSum); err != nil {
		return nil, err
	}
	sort.Strings(m.files)
	kept = true
	return m, nil
}

// buildManifest hashes every identifier the case knows (the analysis
// tables, and the directory and provider Draft recorded in
// notice_identities) and the logged texts of every request the analysis
// names, whose shingles it writes to textsPath (sealTexts). Identifiers
// made of ordinary words (the templates', the provider's) are marked
// generic. The notices themselves are added by the caller, who closes it.
func buildManifest(ctx context.Context, db *sql.DB, textsPath string) (*manifest, error) {
	m := newManifest()
	m.textb.dir = filepath.Dir(textsPath)
	m.ids.dir = m.textb.dir
	// Its identifiers' files go on any error.
	kept := false
	defer func() {
		if !kept {
			m.ids.close()
		}
	}()
	var provider []string
	if err := eachRow(ctx, db, "notify_provider_identity", func(rows *sql.Rows) error {
		var v string
		err := rows.Scan(&v)
		provider = append(provider, v)
		return err
	}); err != nil {
		return nil, fmt.Errorf("provider identity: %w", err)
	}
	m.vocab = providerVocabulary(provider)
	x := newHasher()
	// The identifiers are read on one goroutine and hashed on this one
	// (100,000 tenants: 400,000 rows, about as long to read as to hash).
	type idRow struct{ tenant, kind, value string }
	var readErr error
	batches := readBatches(ctx, db, "notify_identifiers", 4096, func(rows scanner) (r idRow, err error) {
		err = rows.Scan(&r.tenant, &r.kind, &r.value)
		return r, err
	}, &readErr)
	var addErr error
	for batch := range batches {
		for _, r := range batch {
			if err := m.addIdentifier(x, r.tenant, r.kind, r.value); err != nil && addErr == nil {
				addErr = fmt.Errorf("identifiers: tenant %s: %w", r.tenant, err)
			}
		}
	}
	if readErr != nil {
		return nil, fmt.Errorf("identifiers: %w", readErr)
	}
	if addErr != nil {
		return nil, addErr
	}
	if err := m.ids.seal(); err != nil {
		return nil, err
	}
	// The texts are read on one goroutine, cut into shingles and hashed
	// (SHA-256 of each: at 10M requests 37 million) on one per CPU, and
	// given to the builder here, in any order: the file is sorted.
	type shingled struct {
		es []textEntry
		ks []int
	}
	var textErr error
	texts := readBatches(ctx, db, "notify_texts", 256, func(rows scanner) (s string, err error) {
		err = rows.Scan(&s)
		return s, err
	}, &textErr)
	out := make(chan shingled, 2)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := newHasher()
			for batch := range texts {
				var sh shingled
				emit := func(d digest, q uint64) { sh.es = append(sh.es, entryOf(d, q)) }
				for _, s := range batch {
					if k := shingles(x, words(s), emit); k > 0 {
						sh.ks = addK(sh.ks, k)
					}
				}
				out <- sh
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	for sh := range out {
		for _, e := range sh.es {
			m.textb.addEntry(e)
		}
		for _, k := range sh.ks {
			m.textKs = addK(m.textKs, k)
		}
	}
	if textErr != nil {
		m.textb.removeRuns()
		return nil, fmt.Errorf("logged texts: %w", textErr)
	}
	if err := m.sealTexts(textsPath); err != nil {
		return nil, err
	}
	kept = true
	return m, nil
}

// readBatches reads a large result's rows (eachPiece, scan) on a goroutine
// of its own and sends them in batches of size, a few batches ahead; the
// channel is closed at the end, and *err, read once it is, is the read's
// error.
func readBatches[T any](ctx context.Context, db *sql.DB, base string, size int, scan func(scanner) (T, error), err *error) <-chan []T {
	batches := make(chan []T, 2)
	go func() {
		defer close(batches)
		batch := make([]T, 0, size)
		*err = eachPiece(ctx, db, base, pieceRowsOf(size), func(rows scanner) error {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			if batch = append(batch, v); len(batch) == size {
				batches <- batch
				batch = make([]T, 0, size)
			}
			return nil
		})
		if *err == nil && len(batch) > 0 {
			batches <- batch
		}
	}()
	return batches
}

// pieceRowsOf is how many rows a piece read by readBatches holds: 64
// batches.
func pieceRowsOf(batch int) int64 { return int64(batch) * 64 }

func eachRow(ctx context.Context, db *sql.DB, query string, f func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, queries.Get(query))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// caseManifest rebuilds an outbox's manifest from the case database alone:
// buildManifest, and each notice's owner from the notices table.
func caseManifest(ctx context.Context, db *sql.DB, textsPath string) (*manifest, error) {
	m, err := buildManifest(ctx, db, textsPath)
	if err != nil {
		return nil, err
	}
	if err := caseNotices(ctx, db, m); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// caseNotices adds each drafted notice's owner and numbers from the
// notices table.
func caseNotices(ctx context.Context, db *sql.DB, m *manifest) error {
	var identities int
	if err := db.QueryRowContext(ctx, queries.Get("notify_identities_count")).Scan(&identities); err != nil {
		return fmt.Errorf("notice identities: %w", err)
	}
	if err := eachRow(ctx, db, "notify_notice_files", func(rows *sql.Rows) error {
		var file, kind string
		var tenant, numbers sql.NullString
		if err := rows.Scan(&file, &kind, &tenant, &numbers); err != nil {
			return err
		}
		nums, ok := parseNumberSet(numbers.String)
		if !ok || !numbers.Valid {
			return fmt.Errorf("notice %s: no own numbers recorded (drafted by an older leakmap): redraft the notices", file)
		}
		m.numbers[file] = nums
		owner := regulatorKey
		if kind != "regulator" {
			owner = ownerKey(tenant.String)
		}
		m.notices[file] = owner
		m.files = append(m.files, file)
		return nil
	}); err != nil {
		return fmt.Errorf("notices: %w", err)
	}
	if len(m.files) == 0 {
		return fmt.Errorf("the case database holds no drafted notices: run 'leakmap notify draft' first")
	}
	if identities == 0 {
		return fmt.Errorf("the case database holds no directory snapshot (drafted by an older leakmap): redraft the notices")
	}
	sort.Strings(m.files)
	return nil
}

// storeIdentities records in notice_identities what the manifest needs
// beside the analysis: every directory entry's id, name and addresses
// (valid or not), and the provider's own name, addresses, incident id and
// title. 'notify check --db' rebuilds the manifest from them.
func storeIdentities(ctx context.Context, db *sql.DB, dir *Directory, inc *incident.Incident) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("notice identities: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, queries.Get("notify_identities_clear")); err != nil {
		return fmt.Errorf("notice identities: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppenderWithColumns(dc.(driver.Conn), "", "", "notice_identities", []string{"tenant_id", "kind", "value"})
		if err != nil {
			return err
		}
		add := func(tenant driver.Value, kind, value string) error {
			if value == "" {
				return nil
			}
			return app.AppendRow(tenant, kind, value)
		}
		for _, id := range dir.IDs() {
			e := dir.Lookup(id)
			errs := []error{add(id, "tenant_id", id), add(id, "name", e.Name)}
			for _, a := range e.Emails {
				errs = append(errs, add(id, "email", a))
			}
			if err := errors.Join(errs...); err != nil {
				app.Close()
				return err
			}
		}
		for _, v := range []string{inc.Provider.Name, inc.Provider.Email, inc.Provider.DPOEmail, inc.ID, inc.Title} {
			if err := add(nil, "provider", v); err != nil {
				app.Close()
				return err
			}
		}
		return app.Close()
	})
	if err != nil {
		return fmt.Errorf("notice identities: %w", err)
	}
	return nil
}
