package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// recordOffsets finds where each record at p starts in a JSON document
// (its byte offset in raw), in the order documentRecords finds them, so a
// record of a pretty-printed page gets the line its own object starts on.
// ok is false when the walk cannot say (records inside a JSON string, a
// key/value step, repeated keys): the caller keeps the document's line.
func recordOffsets(raw []byte, p path) (offs []int64, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	w := &offsetWalker{dec: dec, raw: raw}
	if err := w.value(p, top); err != nil {
		return nil, false
	}
	return w.offs, true
}

// Where a value sits, for the rules documentRecords follows.
const (
	top     = iota // the document: without the path's first key it is a record itself
	inField        // a field's value: null holds no record
	inArray        // an array's element: null is a record (rejected)
)

var errNoOffsets = errors.New("record offsets unknown")

type offsetWalker struct {
	dec  *json.Decoder
	raw  []byte
	offs []int64
}

// start is the offset of the next token: past blanks and separators.
func (w *offsetWalker) start() int64 {
	off := w.dec.InputOffset()
	for off < int64(len(w.raw)) {
		switch w.raw[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// value reads one value, noting the records p reaches inside it.
func (w *offsetWalker) value(p path, where int) error {
	at := w.start()
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	if tok == nil && where == inField {
		return nil
	}
	if len(p) == 0 {
		w.offs = append(w.offs, at)
		return w.rest(tok)
	}
	d, _ := tok.(json.Delim)
	switch st := p[0]; {
	case st.kind == stepField && d == '{':
		seen := false
		for w.dec.More() {
			k, err := w.dec.Token()
			if err != nil {
				return err
			}
			if k != st.name {
				if err := w.skip(); err != nil {
					return err
				}
				continue
			}
			if seen {
				return errNoOffsets // the last of repeated keys wins in the decoded document
			}
			seen = true
			if err := w.value(p[1:], inField); err != nil {
				return err
			}
		}
		if !seen && where == top {
			w.offs = append(w.offs, at)
		}
		_, err := w.dec.Token()
		return err
	case (st.kind == stepAll || st.kind == stepIndex) && d == '[':
		for i := 0; w.dec.More(); i++ {
			if st.kind == stepAll || i == st.i {
				if err := w.value(p[1:], inArray); err != nil {
					return err
				}
			} else if err := w.skip(); err != nil {
				return err
			}
		}
		_, err := w.dec.Token()
		return err
	case tok == nil:
		return nil // null: no records (documentRecords skips it too)
	default:
		if _, isStr := tok.(string); isStr || st.kind == stepKey {
			return errNoOffsets // records inside a JSON string, or chosen by key
		}
		return w.rest(tok) // not what the path walks into: no records
	}
}

// skip reads one whole value.
func (w *offsetWalker) skip() error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	return w.rest(tok)
}

// rest reads the rest of a value whose first token was tok.
func (w *offsetWalker) rest(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := w.dec.Token()
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
	}
	return nil
}
