package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxLineBytes is --max-line-bytes: an engine's most verbose line
// for a million-token prompt is tens of MB; a longer line is rejected, with
// its file and line, and never held in memory whole.
const DefaultMaxLineBytes = 64 << 20

// keepLongBytes is how much of a line over the limit is kept as its raw
// text in rejected_rows.
const keepLongBytes = 4096

// lineReader yields the lines of a text stream, each at most max bytes in
// memory: a longer line is read through to its end (so line numbers stay
// right), only its first keepLongBytes kept, and reported as a
// *longLineError.
type lineReader struct {
	r    *bufio.Reader
	line int64
	buf  []byte
	max  int
	// dmg is the stream's damage, if it is compressed: the line the break
	// cut (or, at a line end, one line standing for the lost rest) is
	// reported once as a *longLineError with the damage as its reason.
	dmg     *streamDamage
	dmgDone bool
}

// longLineError is a line over the limit: its number and full length.
type longLineError struct {
	line, size int64
	max        int
	why        string // another reason than the length: the stream broke
}

func (e *longLineError) Error() string {
	if e.why != "" {
		return e.why
	}
	return longReason(e.size, e.max)
}

func longReason(size int64, max int) string {
	return fmt.Sprintf("line of %d bytes is longer than --max-line-bytes %d: not read (its first %d bytes are kept)", size, max, keepLongBytes)
}

// newLineReader reads r's lines; max <= 0 is DefaultMaxLineBytes.
func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	// 64 KiB reads as fast as 1 MiB, and a fleet's thousands of small
	// files do not each zero a megabyte (a tenth of their ingest).
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max, dmg: damageOf(r)}
}

// next returns the next line without its line ending, and its 1-based
// number; for a line over the limit, its first bytes and a *longLineError.
func (l *lineReader) next() ([]byte, int64, error) {
	l.buf = l.buf[:0]
	var size int64 // the line's bytes, its ending included
	long := false
	var last, beforeNL byte
	var whole []byte // the line, when the reader's buffer holds all of it
	for first := true; ; first = false {
		chunk, err := l.r.ReadSlice('\n')
		size += int64(len(chunk))
		if n := len(chunk); n > 0 && chunk[n-1] == '\n' {
			beforeNL = last
			if n > 1 {
				beforeNL = chunk[n-2]
			}
		}
		if len(chunk) > 0 {
			last = chunk[len(chunk)-1]
		}
		if !long && size > int64(l.max)+2 {
			long = true
			l.buf = l.buf[:min(len(l.buf), keepLongBytes)]
		}
		switch room := keepLongBytes - len(l.buf); {
		case first && err == nil && !long:
			// The usual line, whole in one read: handed out of the
			// reader's buffer, which holds it until the next call, as
			// l.buf would, so that a line is not copied twice on its way
			// to a batch.
			whole = chunk
		case !long:
			l.buf = append(l.buf, chunk...)
		case room > 0:
			l.buf = append(l.buf, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		broken := errors.Is(err, io.EOF) && l.dmg != nil && l.dmg.err != nil && !l.dmgDone
		if broken && size == 0 {
			l.dmgDone = true
			l.line++
			return nil, l.line, &longLineError{line: l.line, max: l.max, why: l.dmg.reason()}
		}
		if err != nil && (!errors.Is(err, io.EOF) || size == 0) {
			return nil, 0, err
		}
		l.line++
		// The line ending: "\n", "\r\n", or a "\r" ending the stream.
		content := size
		cr := last == '\r'
		if err == nil {
			content--
			cr = beforeNL == '\r'
		}
		if cr {
			content--
		}
		b := l.buf
		if whole != nil {
			b = whole
		}
		if !long {
			b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		}
		if broken { // the break cut this line
			l.dmgDone = true
			if len(b) > keepLongBytes {
				b = b[:keepLongBytes]
			}
			return b, l.line, &longLineError{line: l.line, size: content, max: l.max, why: l.dmg.reason()}
		}
		if content > int64(l.max) {
			if len(b) > keepLongBytes {
				b = b[:keepLongBytes]
			}
			return b, l.line, &longLineError{line: l.line, size: content, max: l.max}
		}
		return b, l.line, nil
	}
}

// longLines records the lines over the limit a producer met, so that the
// judge of each record (on another goroutine) rejects them.
type longLines struct {
	mu sync.Mutex
	m  map[int64]*longLineError
}

func (ll *longLines) add(e *longLineError) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if ll.m == nil {
		ll.m = map[int64]*longLineError{}
	}
	ll.m[e.line] = e
}

// reason is the reject reason of line if it was over the limit, else "".
func (ll *longLines) reason(line int64) string {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if e := ll.m[line]; e != nil {
		return e.Error()
	}
	return ""
}

// streamDamage is a compressed stream that broke before its end (a
// truncated .gz): what was read before the break loads as usual, and the
// file is reported.
type streamDamage struct {
	comp string
	err  error
}

func (d *streamDamage) reason() string {
	if errors.Is(d.err, io.ErrUnexpectedEOF) {
		return "truncated " + d.comp + " stream"
	}
	return fmt.Sprintf("damaged %s stream (%v)", d.comp, d.err)
}

// damageReader ends a decompressed stream at its first error, as if the
// file ended there, and records the error.
type damageReader struct {
	r io.Reader
	d *streamDamage
}

func (r *damageReader) Read(p []byte) (int, error) {
	if r.d.err != nil {
		return 0, io.EOF
	}
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.d.err = err
		return n, io.EOF
	}
	return n, err
}

// damageOf is the damage of a stream openContentWith opened, nil if none.
func damageOf(r io.Reader) *streamDamage {
	if e, ok := r.(*endReader); ok {
		r = e.r
	}
	if rc, ok := r.(*readCloser); ok && rc.dmg != nil {
		return rc.dmg
	}
	return nil
}
