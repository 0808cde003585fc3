package ingest

import (
	"io"
	"strings"
)

// A file whose end is torn, uncompressed or not: a log cut while it was
// being written or copied ends inside its last record, which is then
// rejected. DESIGN.md counts that file as damaged, like a truncated .gz:
// what it holds before the damage loads, the torn record is rejected with a
// reason that says so, and ingest exits 3 naming the file, so that 'run'
// does not analyse a case that silently lost the file's end. A last line
// that merely lacks its line ending but reads well is loaded as usual; a
// bad record that is not the file's last is an ordinary rejected row.
const (
	// tornLastLine prefixes the reason of a rejected last line that has
	// no line ending.
	tornLastLine = "torn last line (the file ends inside it, without a line ending)"
	// truncatedDocument is the reason of a whole JSON document (an API
	// page, pretty-printed or not) that the file ends inside of.
	truncatedDocument = "truncated JSON document (the file ends inside it)"
)

// damageOfReason is the damage a rejected row's reason records ("" if
// none): a broken compressed stream, a torn last line, a cut document.
func damageOfReason(reason string) string {
	switch {
	case strings.HasPrefix(reason, tornLastLine):
		return "torn last line"
	case strings.HasPrefix(reason, truncatedDocument):
		return "truncated JSON document"
	}
	return ""
}

// endReader passes a stream through, noting whether it ended without a
// line ending (its last line torn, or simply unterminated).
type endReader struct {
	r        io.Reader
	any, eof bool
	last     byte
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if n > 0 {
		e.any, e.last = true, p[n-1]
	}
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}

// unterminated reports whether the stream was read to its end and its last
// byte is no line ending. Called once the read is over.
func (e *endReader) unterminated() bool {
	return e.eof && e.any && e.last != '\n' && e.last != '\r'
}

// tornSink holds back each rejected record until the next record is
// emitted: the last one, if the file ends inside it, is rejected as torn.
// Records are emitted in file order by every reader.
type tornSink struct {
	s       sink
	end     *endReader
	pending *pendingReject
	damage  string // set by finish, or by a cut document's reason
	err     error  // an emission that failed where it could not be returned
}

type pendingReject struct {
	line        int64
	reason, raw string
}

func newTornSink(s sink, end *endReader) sink {
	t := &tornSink{s: s, end: end}
	if _, ok := s.(rowAtSink); ok {
		return &tornRowAtSink{t}
	}
	return t
}

func (t *tornSink) flush() error {
	if t.err != nil {
		return t.err
	}
	p := t.pending
	if p == nil {
		return nil
	}
	t.pending = nil
	t.err = t.s.reject(p.line, p.reason, p.raw)
	return t.err
}

func (t *tornSink) row(line int64, v values) error {
	if err := t.flush(); err != nil {
		return err
	}
	return t.s.row(line, v)
}

func (t *tornSink) reject(line int64, reason, raw string) error {
	if err := t.flush(); err != nil {
		return err
	}
	if d := damageOfReason(reason); d != "" && t.damage == "" {
		t.damage = d
	}
	t.pending = &pendingReject{line, reason, raw}
	return nil
}

func (t *tornSink) duplicateLine() {
	if t.flush() == nil {
		t.s.duplicateLine()
	}
}

// finish emits the held record, as torn if the stream ended inside it,
// unless notLast: after a broken compressed stream (its cut line already
// says so), or when the held record is not the file's last. It returns the
// file's damage, "" if none.
func (t *tornSink) finish(notLast bool) (string, error) {
	if p := t.pending; p != nil && t.err == nil {
		if !notLast && t.end.unterminated() && damageOfReason(p.reason) == "" {
			p.reason = tornLastLine + ": " + p.reason
			if t.damage == "" {
				t.damage = "torn last line"
			}
		}
	}
	return t.damage, t.flush()
}

// tornRowAtSink is a tornSink over a sink whose records need no line order.
type tornRowAtSink struct{ *tornSink }

func (t *tornRowAtSink) rowAt(id, line int64, v values) error {
	if err := t.flush(); err != nil {
		return err
	}
	return t.s.(rowAtSink).rowAt(id, line, v)
}

// tornOf returns the tornSink inside s.
func tornOf(s sink) *tornSink {
	switch t := s.(type) {
	case *tornSink:
		return t
	case *tornRowAtSink:
		return t.tornSink
	}
	return nil
}
