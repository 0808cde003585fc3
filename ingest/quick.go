package ingest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"time"
	"unicode/utf8"
)

// quickCanonical reads a canonical JSON Lines record (the identity
// mapping) straight into its row, without the map of the general decode:
// a flat object of strings, numbers, booleans and nulls. It takes only
// what it reads exactly as parseLine would, and the values are the ones
// parseLine gives; anything else (a nested value under a canonical key, a
// key given twice or with escapes, a value the conversion refuses, a
// required field missing) makes it give up, and parseLine judges the line,
// with its reason. TestQuickCanonicalAgreesWithParseLine and
// FuzzQuickCanonical hold it to that.
func quickCanonical(line []byte, m *Mapping) (values, bool) {
	var q quickRow
	var st quickState
	if !quickParse(line, m, &q, &st) {
		return values{}, false
	}
	return q.values(), true
}

// quickRow is a row quickParse read, without an allocation per value:
// text as bytes of the line (or of its unescaped copy), counts, times.
type quickRow struct {
	set  uint16 // the fields that have a value
	text [nFields][]byte
	num  [nFields]int64 // counts; status fits in 32 bits
	time [nFields]int64 // microseconds since the Unix epoch, UTC
}

func (q *quickRow) has(f int) bool { return q.set&(1<<f) != 0 }

// values is the row as parseLine gives it.
func (q *quickRow) values() values {
	var v values
	for f := range nFields {
		if !q.has(f) {
			continue
		}
		switch f {
		case fTS, fEndTS:
			v[f] = time.UnixMicro(q.time[f]).UTC()
		case fPromptTokens, fCompletionTokens:
			v[f] = q.num[f]
		case fStatus:
			v[f] = int32(q.num[f])
		default:
			v[f] = string(q.text[f])
		}
	}
	return v
}

// quickState is what one reader's quickParse learns from a line for the
// next: a log's writer puts the keys in one order and writes many records a
// day, so the next key is guessed (and checked byte for byte) and a date
// already read is not read again. A wrong guess costs only the usual read.
type quickState struct {
	follow [nFields + 1]int8 // follow[f+1]: the canonical key that came after f in the last line (follow[0]: its first)
	dates  [4]quickDate      // valid dates read last, by their last digit: a file's offsets put a time on two days
}

// quickDate is a valid date (2006-01-02) and its day since 1970-01-01.
type quickDate struct {
	date [10]byte
	days int64
	ok   bool
}

// quickParse is quickCanonical into q (q.set cleared by the caller; a
// field's value counts only where set has it), st carried from line to
// line by one reader.
func quickParse(line []byte, m *Mapping, q *quickRow, st *quickState) bool {
	if !utf8.Valid(line) {
		return false
	}
	p := picker{b: line}
	p.ws()
	if p.peek() != '{' {
		return false
	}
	p.i++
	p.depth = 1
	p.ws()
	var seen uint16
	if p.peek() == '}' {
		return false // nothing required is there
	}
	prev := -1
	for {
		if p.peek() != '"' {
			return false
		}
		f := int(st.follow[prev+1])
		if name := canonicalFields[f]; p.i+len(name)+2 <= len(line) && line[p.i+1+len(name)] == '"' &&
			string(line[p.i+1:p.i+1+len(name)]) == name {
			p.i += len(name) + 2
		} else {
			s, e, ok := p.plainStr()
			if !ok {
				return false
			}
			if f = canonicalIndex(line[s:e]); f >= 0 {
				st.follow[prev+1] = int8(f)
			}
		}
		p.ws()
		if p.peek() != ':' {
			return false
		}
		p.i++
		p.ws()
		if f < 0 {
			if !p.skip() {
				return false
			}
		} else {
			prev = f
			if seen&(1<<f) != 0 {
				return false // the first wins there: parseLine decides
			}
			seen |= 1 << f
			if !p.quickField(f, q, m, st) {
				return false
			}
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			p.ws()
			if p.i != len(p.b) {
				return false
			}
			for _, f := range quickRequired {
				if !q.has(f) {
					return false
				}
			}
			return true
		default:
			return false
		}
	}
}

// quickRequired are requiredFields' indexes.
var quickRequired = []int{fRequestID, fTS, fTenantID, fModel, fPromptTokens}

// canonicalIndex is the index of the canonical field named b, -1 if none.
func canonicalIndex(b []byte) int {
	switch string(b) {
	case "request_id":
		return fRequestID
	case "ts":
		return fTS
	case "end_ts":
		return fEndTS
	case "tenant_id":
		return fTenantID
	case "model":
		return fModel
	case "prompt_tokens":
		return fPromptTokens
	case "completion_tokens":
		return fCompletionTokens
	case "status":
		return fStatus
	case "prefill_instance":
		return fPrefill
	case "decode_instance":
		return fDecode
	case "prompt_text":
		return fPromptText
	case "response_text":
		return fResponseText
	}
	return -1
}

// quickField reads the value of canonical field f at p.i into q, as
// lookupPath and Mapping.convert would; false gives up.
func (p *picker) quickField(f int, q *quickRow, m *Mapping, st *quickState) bool {
	var src any
	switch c := p.peek(); {
	case c == '"':
		s, e, ok := p.plainStr()
		esc := !ok
		if esc {
			if s, e, _, ok = p.str(); !ok {
				return false
			}
		}
		if esc {
			u, ok := unquoteJSON(p.b[s:e])
			if !ok {
				return false
			}
			src = u
			break
		}
		raw := p.b[s:e]
		switch f {
		case fRequestID, fTenantID, fModel, fPrefill, fDecode, fPromptText, fResponseText:
			// toString / toText of a string: the line is valid UTF-8, and
			// "" is absent.
			if len(raw) > 0 {
				q.text[f] = raw
				q.set |= 1 << f
			}
			return true
		case fTS, fEndTS:
			if (m.TimeFormat == "" || m.TimeFormat == "auto") && m.loc == time.UTC {
				if us, ok := quickMicros(raw, st); ok {
					q.time[f] = us
					q.set |= 1 << f
					return true
				}
			}
		}
		src = string(raw)
	case c == 'n':
		return p.lit("null") // JSON null is absent
	case c == 't':
		if !p.lit("true") {
			return false
		}
		src = true
	case c == 'f':
		if !p.lit("false") {
			return false
		}
		src = false
	case c == '-' || c >= '0' && c <= '9':
		s := p.i
		if !p.number() {
			return false
		}
		num := p.b[s:p.i]
		if f == fPromptTokens || f == fCompletionTokens || f == fStatus {
			if n, ok := plainCount(num); ok {
				if f == fStatus && n > math.MaxInt32 {
					return false
				}
				q.num[f] = n
				q.set |= 1 << f
				return true
			}
		}
		src = json.Number(num)
	default:
		return false // an object or an array: parseLine decides
	}
	val, err := m.convert(canonicalFields[f], src)
	if err != nil {
		return false
	}
	return q.put(f, val)
}

// put stores a converted value; false for a type the row does not hold.
func (q *quickRow) put(f int, val any) bool {
	switch x := val.(type) {
	case nil:
		return true
	case string:
		q.text[f] = []byte(x)
	case time.Time:
		q.time[f] = x.UnixMicro()
	case int64:
		q.num[f] = x
	case int32:
		q.num[f] = int64(x)
	default:
		return false
	}
	q.set |= 1 << f
	return true
}

// plainCount reads digits alone, at most 18 of them (no sign, fraction or
// exponent), as strconv.ParseInt does.
func plainCount(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// plainStr steps over the string at p.i if it holds no escape (and no
// control character): s and e bound its content. Otherwise it leaves p.i
// where it was and reports false (p.str then reads it, escapes and all).
func (p *picker) plainStr() (s, e int, ok bool) {
	s = p.i + 1
	b := p.b
	i := s
	// Eight bytes at a time: any byte that is '"', '\\' or below 0x20.
	// The lowest flagged byte is exact (the borrows that can flag bytes
	// wrongly only run upwards from a true one), so the usual string ends
	// here without a second pass over its last word.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		stop := (((q - ones) &^ q) | ((bs - ones) &^ bs) | (x - ones*0x20)) &^ x & highs
		if stop != 0 {
			i += bits.TrailingZeros64(stop) / 8
			if b[i] != '"' {
				return 0, 0, false
			}
			p.i = i + 1
			return s, i, true
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return s, i, true
		case c < 0x20 || c == '\\':
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// Unix seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: toTime's
// year range.
const (
	minUnixSec = -62135596800
	maxUnixSec = 253402300799
)

// quickMicros is quickTime in UTC followed by toTime's range check and
// normalisation (UTC, truncated to the microsecond), as microseconds since
// the Unix epoch, without building a time.Time; false where quickTime
// gives up or the year is out of range. A date st read last is not read
// again (st may be nil).
func quickMicros(s []byte, st *quickState) (int64, bool) {
	var days int64
	var d *quickDate
	if st != nil && len(s) >= 10 {
		d = &st.dates[s[9]&3]
	}
	if d != nil && d.ok && string(s[:10]) == string(d.date[:]) {
		days = d.days
	} else {
		var c stamp
		if !readDate(s, &c) {
			return 0, false
		}
		days = daysFromCivil(c.year, c.month, c.day)
		if d != nil {
			copy(d.date[:], s[:10])
			d.days, d.ok = days, true
		}
	}
	var c stamp
	if !readClock(s, &c) {
		return 0, false
	}
	unix := days*86400 + c.hour*3600 + c.minute*60 + c.sec - c.off
	if unix < minUnixSec || unix > maxUnixSec {
		return 0, false
	}
	return unix*1_000_000 + c.nsec/1000, true
}

// stamp is a time as the usual forms write it (see quickTime): its civil
// fields, its fraction in nanoseconds, and its zone (none, Z, or an offset
// of off seconds east).
type stamp struct {
	year, month, day, hour, minute, sec, nsec int64
	zone                                      int
	off                                       int64
}

const (
	zoneNone = iota
	zoneUTC
	zoneOffset
)

// readStamp reads 2006-01-02T15:04:05.999999999 (T or a space), then
// nothing, Z or +hh:mm, with every field in range and the day in its month;
// false for anything else. One reader for quickTime (the checked path's
// strings) and quickMicros (the Go reader's bytes, which reads the date
// and the clock apart).
func readStamp[T string | []byte](s T) (stamp, bool) {
	var c stamp
	return c, readDate(s, &c) && readClock(s, &c)
}

// digits2 is the number written by s[i:i+2], -1 unless both are digits.
func digits2[T string | []byte](s T, i int) int64 {
	a, b := s[i]-'0', s[i+1]-'0'
	if a > 9 || b > 9 {
		return -1
	}
	return int64(a)*10 + int64(b)
}

// readDate reads readStamp's 2006-01-02 into c.
func readDate[T string | []byte](s T, c *stamp) bool {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' {
		return false
	}
	hi, lo := digits2(s, 0), digits2(s, 2)
	if hi < 0 || lo < 0 {
		return false
	}
	c.year, c.month, c.day = hi*100+lo, digits2(s, 5), digits2(s, 8)
	if c.month < 1 || c.month > 12 || c.day < 1 {
		return false
	}
	return c.day <= daysIn(c.year, c.month)
}

// readClock reads what follows readStamp's date into c: T15:04:05, the
// fraction and the zone.
func readClock[T string | []byte](s T, c *stamp) bool {
	if len(s) < 19 || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return false
	}
	c.hour, c.minute, c.sec = digits2(s, 11), digits2(s, 14), digits2(s, 17)
	if c.hour < 0 || c.hour > 23 || c.minute < 0 || c.minute > 59 || c.sec < 0 || c.sec > 59 {
		return false
	}
	i := 19
	if i < len(s) && s[i] == '.' {
		n := 1
		var v int64
		for i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '9' {
			v = v*10 + int64(s[i+n]-'0')
			n++
		}
		if n == 1 || n > 10 {
			return false
		}
		for range 10 - n {
			v *= 10
		}
		c.nsec = v
		i += n
	}
	switch rest := len(s) - i; {
	case rest == 0:
		c.zone = zoneNone
	case rest == 1 && s[i] == 'Z':
		c.zone = zoneUTC
	case rest == 6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, om := digits2(s, i+1), digits2(s, i+4)
		if oh < 0 || oh > 23 || om < 0 || om > 59 {
			return false
		}
		c.zone, c.off = zoneOffset, (oh*60+om)*60
		if s[i] == '-' {
			c.off = -c.off
		}
	default:
		return false
	}
	return true
}

// daysIn is the number of days of a month of the proleptic Gregorian
// calendar (year 0 a leap year, as time.Date has it).
func daysIn(year, month int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the day of a date counted from 1970-01-01 (Howard
// Hinnant's algorithm), for years from 0 on.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if y < 0 {
		era = y - 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
