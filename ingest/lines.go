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
}

// longLineError is a line over the limit: its number and full length.
type longLineError struct {
	line, size int64
	max        int
}

func (e *longLineError) Error() string { return longReason(e.size, e.max) }

func longReason(size int64, max int) string {
	return fmt.Sprintf("line of %d bytes is longer than --max-line-bytes %d: not read (its first %d bytes are kept)", size, max, keepLongBytes)
}

// newLineReader reads r's lines; max <= 0 is DefaultMaxLineBytes.
func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &lineReader{r: bufio.NewReaderSize(r, 1<<20), max: max}
}

// next returns the next line without its line ending, and its 1-based
// number; for a line over the limit, its first bytes and a *longLineError.
func (l *lineReader) next() ([]byte, int64, error) {
	l.buf = l.buf[:0]
	var size int64 // the line's bytes, its ending included
	long := false
	var last, beforeNL byte
	for {
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
		if !long {
			l.buf = append(l.buf, chunk...)
		} else if room := keepLongBytes - len(l.buf); room > 0 {
			l.buf = append(l.buf, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
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
		if !long {
			b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
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
