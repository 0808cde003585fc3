package notify

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Numbers a notice writes about itself. A bare number in running prose is
// a date, a count or part of the provider's own text almost always, so an
// all-number identifier of another tenant (a request id "4711", a tenant
// id "2026") cannot be matched there as a word sequence without blocking
// every notice (issue 9, item 4). It cannot be let through either (no true
// leak missed). The draft therefore records, per notice, the numbers its
// own facts put in the prose: every count, every date's parts, and the
// digits of its own strings (incident id, attachment name, custom wording,
// the tenant's own name), taken from the typed view the template renders,
// not from the rendered text. The check blocks a number of the prose that
// equals another tenant's identifier unless it is one of these or a number
// of leakmap's own templates ("Articles 33 and 34"). A foreign id that
// equals one of the notice's own numbers is indistinguishable from it in
// prose and is not a hit there (docs/notices.md); it still is everywhere
// identifiers stand: a joined token, a list cell, the attachment.

// numberSet is a set of digit strings, as the check's words write them.
type numberSet map[string]bool

// ownNumbers returns the numbers a view's facts can write: walked by
// reflection so a field added to a view is covered without a list to keep.
func ownNumbers(view any) numberSet {
	s := numberSet{}
	s.addValue(reflect.ValueOf(view))
	return s
}

var timeType = reflect.TypeOf(time.Time{})
var durationType = reflect.TypeOf(time.Duration(0))

func (s numberSet) addValue(v reflect.Value) {
	if !v.IsValid() {
		return
	}
	switch {
	case v.Type() == timeType:
		s.addTime(v.Interface().(time.Time))
		return
	case v.Type() == durationType:
		d := v.Interface().(time.Duration).Round(time.Minute)
		s.addInt(int64(d / time.Hour))
		s.addInt(int64(d % time.Hour / time.Minute))
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			s.addValue(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			s.addValue(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			s.addValue(v.Index(i))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s.addInt(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s.addInt(int64(v.Uint()))
	case reflect.String:
		for _, w := range numberWords(v.String()) {
			s[w] = true
		}
	}
}

// addInt adds n as written plainly and as the catalogues group it
// ("1,840" and "1 840" are the words 1 and 840).
func (s numberSet) addInt(n int64) {
	if n < 0 {
		n = -n
	}
	d := strconv.FormatInt(n, 10)
	s[d] = true
	for len(d) > 3 {
		s[d[len(d)-3:]] = true
		d = d[:len(d)-3]
	}
	s[d] = true
}

// addTime adds every part of t (UTC) that a prose date, an RFC 3339 time
// or a mail Date header writes, padded and not.
func (s numberSet) addTime(t time.Time) {
	if t.IsZero() {
		return
	}
	t = t.UTC()
	key := [2]int64{t.Unix(), int64(t.Nanosecond())}
	timePartsMu.Lock()
	p, ok := timeParts[key]
	timePartsMu.Unlock()
	if !ok {
		for i, layout := range timePartLayouts {
			p[i] = t.Format(layout)
		}
		timePartsMu.Lock()
		if len(timeParts) >= 1<<12 {
			clear(timeParts)
		}
		timeParts[key] = p
		timePartsMu.Unlock()
	}
	for _, w := range p {
		s[w] = true
	}
}

var timePartLayouts = [...]string{"2006", "01", "1", "02", "2", "15", "3", "04", "05"}

// timeParts memoises addTime's formatting by instant (seconds and
// nanoseconds of a UTC time, exact for every year), in a small table
// emptied when full: every notice of an incident writes the same few
// dates, and formatting them was a tenth of drafting a notice's own
// numbers.
var (
	timePartsMu sync.Mutex
	timeParts   = map[[2]int64][len(timePartLayouts)]string{}
)

// covers reports whether every word is a number the notice writes itself:
// one of its own facts or one of leakmap's own templates.
func (s numberSet) covers(ws []string) bool {
	static, _ := builtin()
	for _, w := range ws {
		if _, ok := static[w]; !ok && !s[w] {
			return false
		}
	}
	return true
}

// String writes the set for the manifest and the notices table: sorted,
// comma-separated, "-" when empty.
func (s numberSet) String() string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(slices.Sorted(maps.Keys(s)), ",")
}

// parseNumberSet reads String's form back.
func parseNumberSet(v string) (numberSet, bool) {
	s := numberSet{}
	if v == "-" || v == "" {
		return s, true
	}
	for _, w := range strings.Split(v, ",") {
		if !isNumber(w) {
			return nil, false
		}
		s[w] = true
	}
	return s, true
}

func allNumbers(ws []string) bool {
	for _, w := range ws {
		if !isNumber(w) {
			return false
		}
	}
	return len(ws) > 0
}

// mayHoldNumber is false for ASCII text without a digit, whose words
// (lowercased, split at every other byte) cannot be numbers; text with
// other characters may (fullwidth or other scripts' digits).
func mayHoldNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || '0' <= c && c <= '9' {
			return true
		}
	}
	return false
}

// numberWords returns the words of s that are numbers. Most of a view's
// text is the catalogue's, the same in every notice: its results are
// cached (bounded).
func numberWords(s string) []string {
	if !mayHoldNumber(s) {
		return nil
	}
	numberWordsMu.Lock()
	ns, ok := numberWordsCache[s]
	numberWordsMu.Unlock()
	if ok {
		return ns
	}
	for _, w := range words(s) {
		if isNumber(w) {
			ns = append(ns, w)
		}
	}
	numberWordsMu.Lock()
	if len(numberWordsCache) >= 1<<14 {
		clear(numberWordsCache)
	}
	numberWordsCache[s] = ns
	numberWordsMu.Unlock()
	return ns
}

var (
	numberWordsMu    sync.Mutex
	numberWordsCache = map[string][]string{}
)
