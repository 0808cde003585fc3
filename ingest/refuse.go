package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/leakmap/leakmap/errs"
)

// Bad input of the real-world kind: a file the layout does not fit at all
// (a pretty-printed page given to a line layout, JSON in a CSV cell the
// mapping does not reach, a text log given as JSON) is refused whole, in
// one line naming the file, what it looks like, the field and how to map
// it, rather than loaded as N of N rejected records.

// Text logs, recognised by their first line.
var textLogs = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?( [A-Z]{2}\d+)*[^\]]*\] `),
		"an SGLang text log (`[time TPn] message` lines); `leakmap preflight` reads its start-up lines (the capacity timeline); SGLang's request log is the JSON one (--log-requests --log-requests-format json), read by --preset sglang"},
	{regexp.MustCompile(`^(INFO|WARNING|ERROR|DEBUG|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2} `),
		"a vLLM text log (`LEVEL MM-DD HH:MM:SS file.py:line] message` lines, no year, no zone); `leakmap preflight` reads its start-up lines; vLLM's per-request data comes as OTLP spans (--otlp-traces-endpoint), read by --preset otlp-genai"},
	{regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\S*\s+[A-Za-z]`),
		"a text log (timestamped message lines), not JSON Lines or CSV; `leakmap preflight` reads engines' text logs"},
}

// textLog says what kind of text log head is, or "".
func textLog(head []byte) string {
	first := firstLine(head)
	for i, t := range textLogs {
		if i == len(textLogs)-1 && bytes.ContainsRune(first, ',') {
			break // a timestamped CSV row, perhaps
		}
		if t.re.Match(first) {
			return t.what
		}
	}
	return ""
}

func firstLine(head []byte) []byte {
	for _, l := range bytes.Split(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			return l
		}
	}
	return nil
}

// prettyJSON reports whether head opens a JSON document spread over lines
// (its first line is not a JSON value on its own).
func prettyJSON(head []byte) bool {
	first := firstLine(head)
	if len(first) == 0 || (first[0] != '{' && first[0] != '[') {
		return false
	}
	return !validJSON(first)
}

// missingField reads the field out of a "FIELD: missing" reject reason.
func missingField(reason string) (string, bool) {
	reason = strings.TrimPrefix(reason, "engine: ")
	f, rest, ok := strings.Cut(reason, ": ")
	if !ok || !strings.HasPrefix(rest, "missing") {
		return "", false
	}
	return f, true
}

// refusal says, on one line, that every record lacks field and how to give
// it a source. sample is a record of the file, to point at JSON the
// mapping does not reach.
func refusal(m *Mapping, field string, sample map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "every record lacks %s", field)
	src := m.source(field)
	if src != "" {
		fmt.Fprintf(&b, " (layout %s reads it from %s)", m.name, src)
	} else {
		fmt.Fprintf(&b, " (layout %s has no source for it)", m.name)
	}
	if src != "" && sample != nil {
		if leaf := lastName(src); leaf != "" {
			if at := findKey(sample, leaf, "", 0); at != "" && at != src {
				fmt.Fprintf(&b, "; the records hold %s inside JSON at %s: map it as %s", leaf, at, at)
			}
		}
	}
	b.WriteString("; ")
	switch field {
	case "tenant_id":
		b.WriteString("give the source tenant_field: PATH (e.g. metadata.KEY) or, for a per-account export, tenant: ACCOUNT (flags --tenant-field, --tenant)")
	case "model":
		b.WriteString("give the source model: NAME (flag --model)")
	case "instance":
		b.WriteString("the instance is the host in the file name {host}_{rank}.log[.YYYY-MM-DD_HH][.gz]: keep the names the engine wrote, or map instance in a mapping file (extends: " + m.name + ", constants: {instance: HOST})")
	default:
		fmt.Fprintf(&b, "map it in a mapping file (extends: %s, fields: {%s: your.path}; see docs/layouts.md)", m.name, field)
	}
	if m.hint != "" && field != "instance" {
		b.WriteString("; " + m.hint)
	}
	return b.String()
}

func lastName(src string) string {
	p, err := parsePath(src)
	if err != nil {
		return ""
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].kind == stepField || p[i].kind == stepKey {
			return p[i].name
		}
	}
	return ""
}

// findKey finds key in v (objects, arrays' first elements, JSON held in
// strings) and returns its path, or "".
func findKey(v any, key, at string, depth int) string {
	if depth > 5 {
		return ""
	}
	switch x := jsonIn(v).(type) {
	case map[string]any:
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if strings.HasPrefix(k, "$") {
				continue
			}
			p := k
			if at != "" {
				p = at + "." + k
			}
			if k == key && x[k] != nil && depth > 0 {
				return p
			}
		}
		for _, k := range names {
			if strings.HasPrefix(k, "$") {
				continue
			}
			p := k
			if at != "" {
				p = at + "." + k
			}
			if found := findKey(x[k], key, p, depth+1); found != "" {
				return found
			}
		}
	case []any:
		if len(x) > 0 {
			return findKey(x[0], key, at+"[0]", depth+1)
		}
	}
	return ""
}

// countSink counts what a sample of records gives.
type countSink struct {
	rows, rejected int64
	reasons        map[string]int64
}

func (c *countSink) row(int64, values) error { c.rows++; return nil }
func (c *countSink) rowAt(_, _ int64, _ values) error {
	c.rows++
	return nil
}
func (c *countSink) reject(_ int64, reason, _ string) error {
	c.rejected++
	if c.reasons == nil {
		c.reasons = map[string]int64{}
	}
	c.reasons[reason]++
	return nil
}
func (c *countSink) duplicateLine() {}

// sampleHeadLines is how many lines of a file's head the refusal check
// judges: enough that "every one lacks the field" is no accident, few
// enough that a fleet's thousands of small files are not parsed twice.
const sampleHeadLines = 64

// firstLines is b up to its n-th line end.
func firstLines(b []byte, n int) []byte {
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(b[off:], '\n')
		if j < 0 {
			return b
		}
		off += j + 1
	}
	return b[:off]
}

// sampleHead reads the records of a file's head as the load will, and
// refuses the file when every one of them lacks the same required field.
func sampleHead(ctx context.Context, fi *fileInfo, m *Mapping) error {
	if fi.format == formatEmpty || fi.format == formatParquet {
		return nil
	}
	head := fi.head
	if len(head) == sniffSize {
		i := bytes.LastIndexByte(head, '\n')
		if i < 0 {
			return nil
		}
		head = head[:i+1]
	}
	if fi.format == formatJSONL && prettyJSON(head) && len(fi.head) == sniffSize {
		return nil // a big document: the load judges it
	}
	if fi.format != formatCSV || !bytes.Contains(head, []byte{'"'}) {
		head = firstLines(head, sampleHeadLines) // a CSV cell may hold line ends: keep its head whole
	}
	c := &countSink{}
	inst := m.instance(fi.name)
	if err := readStream(ctx, bytes.NewReader(head), fi.format, fi.maxLine, m, inst, c); err != nil {
		return nil // the load reports it with its line
	}
	if c.rows > 0 || c.rejected == 0 {
		return nil
	}
	reason, n := "", int64(0)
	for r, k := range c.reasons {
		if k > n || (k == n && r < reason) {
			reason, n = r, k
		}
	}
	field, ok := missingField(reason)
	if !ok {
		return nil
	}
	return errs.Input("%s: %s", fi.path, refusal(m, field, firstRecord(head, fi.format)))
}

// firstRecord is the first record of a head that parses (a CSV row as
// column: cell), for refusal hints; nil if none.
func firstRecord(head []byte, format string) map[string]any {
	if format == formatCSV {
		header, err := csvHeader(head)
		if err != nil {
			return nil
		}
		lines := bytes.SplitN(head, []byte("\n"), 3)
		if len(lines) < 2 {
			return nil
		}
		rec, err := parseCSVRecord(strings.TrimSuffix(string(lines[1]), "\r"))
		if err != nil || len(rec) != len(header) {
			return nil
		}
		out := map[string]any{}
		for i, h := range header {
			out[h] = rec[i]
		}
		return out
	}
	for _, l := range bytes.Split(head, []byte("\n")) {
		if obj, err := parseJSONObject(bytes.TrimSpace(l)); err == nil {
			return obj
		}
	}
	return nil
}

func validJSON(b []byte) bool { return json.Valid(b) }
