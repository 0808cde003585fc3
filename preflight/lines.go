package preflight

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// What a line can tell, once its time and rank are read.
const (
	evArgs  = iota // SGLang server_args=ServerArgs(...): role, model, context_length
	evKV           // SGLang "KV Cache is allocated. #tokens: N"
	evPool         // SGLang "max_total_num_tokens=N, ..., context_len=L, ..."
	evVArgs        // vLLM "non-default args: {...}": role
	evVPool        // vLLM "GPU KV cache size: N tokens"
	evVConc        // vLLM "Maximum concurrency for L tokens per request: X"
	evCut          // "... exceeds the maximum allowed length ..." (an input the engine refused)
)

// Markers: a line holding none of them is skipped without parsing.
var markers = [][]byte{
	[]byte("server_args=ServerArgs("),
	[]byte("KV Cache is allocated."),
	[]byte("max_total_num_tokens="),
	[]byte("non-default args:"),
	[]byte("GPU KV cache size:"),
	[]byte("Maximum concurrency for"),
	[]byte("exceeds the maximum allowed length"),
}

// startMarkers are the markers that begin a start-up message; a line that
// begins with one (after a time prefix, or none) but cannot be read is a
// problem, never skipped.
var startMarkers = []string{
	"server_args=ServerArgs(",
	"KV Cache is allocated.",
	"max_total_num_tokens=",
	"GPU KV cache size:",
	"Maximum concurrency for",
}

type event struct {
	kind      int
	at        time.Time
	role      string // "prefill", "decode", "both", "" (not stated)
	model     string
	tokens    int64 // the pool (evKV, evPool, evVPool)
	context   int64 // the longest context (evPool, evVConc, evArgs' context_length); 0: not stated
	rid       string
	file      string
	line      int64
	key       string // what makes two events the same line (a log shipped twice)
	fileIndex int
}

var (
	// SGLang: "[%(asctime)s{prefix}] %(message)s", asctime "%Y-%m-%d %H:%M:%S"
	// (some builds "%m-%d %H:%M:%S"), prefix " DP0 PP0 TP3 EP3" or none.
	sglangLine = regexp.MustCompile(`^\[((?:\d{4}-)?\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)((?: [A-Za-z_]+\d+)*)\] (.*)$`)
	// vLLM: "LEVEL MM-DD HH:MM:SS [file.py:line] message" (older:
	// "file.py:line] message"), under an optional "(EngineCore_DP0 pid=7) ".
	vllmLine  = regexp.MustCompile(`^(?:\(([^)]*)\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:[.,]\d+)?) (?:\[[^\]]*\]|[^\s\]]+\]) (.*)$`)
	rankToken = regexp.MustCompile(`[A-Za-z_]+?(\d+)$`)
	vllmDP    = regexp.MustCompile(`_DP(\d+)\b`)
	ansi      = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	kvRole    = regexp.MustCompile(`kv_role['"]?\s*[:=]\s*['"]([A-Za-z_]+)['"]`)
	ridField  = regexp.MustCompile(`\brid=['"]?([^'",\s)]+)`)
)

// lineReader turns raw lines into events. Year-less times take the year from
// the flag, one more each time the month goes back (a log over New Year).
type lineReader struct {
	loc       *time.Location
	year      int
	lastMonth int
	yearAdd   int
}

// errNoYear: a year-less time with no --year.
type errNoYear struct{}

func (errNoYear) Error() string { return "the time has no year (MM-DD HH:MM:SS); give --year" }

// parse reads one line. ok is false for a line that holds nothing for
// preflight. A non-nil error is a start-up line that cannot be read.
func (lr *lineReader) parse(raw []byte) (ev event, ok bool, err error) {
	has := false
	for _, m := range markers {
		if bytes.Contains(raw, m) {
			has = true
			break
		}
	}
	if !has {
		return event{}, false, nil
	}
	line := string(bytes.TrimRight(raw, "\r\n"))
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansi.ReplaceAllString(line, "") // colored output written to a file
	}
	var date, clock, msg string
	rank0 := true
	vllm := false
	if m := sglangLine.FindStringSubmatch(line); m != nil {
		date, clock, msg = m[1], m[2], m[4]
		for _, tok := range strings.Fields(m[3]) {
			if r := rankToken.FindStringSubmatch(tok); r != nil && r[1] != strings.Repeat("0", len(r[1])) {
				rank0 = false
			}
		}
	} else if m := vllmLine.FindStringSubmatch(line); m != nil {
		date, clock, msg = m[2], m[3], m[4]
		vllm = true
		if d := vllmDP.FindStringSubmatch(m[1]); d != nil && d[1] != strings.Repeat("0", len(d[1])) {
			rank0 = false
		}
	} else {
		// No time prefix we know. A start-up message at the start of the line
		// (a bare print, a damaged stamp) cannot be placed: say so.
		t := strings.TrimSpace(line)
		for _, sm := range startMarkers {
			i := strings.Index(t, sm)
			if i == 0 || (i > 0 && strings.HasPrefix(t, "[") && strings.HasSuffix(t[:i], "] ")) {
				return event{}, false, fmt.Errorf("%s line without a time leakmap can read (want \"[YYYY-MM-DD HH:MM:SS TPn] \" or \"INFO MM-DD HH:MM:SS [file:line] \")", strings.TrimSuffix(sm, "("))
			}
		}
		return event{}, false, nil
	}
	if !rank0 {
		return event{}, false, nil // tensor, pipeline and data-parallel ranks repeat rank 0's lines
	}
	ev.kind = -1
	switch {
	case strings.HasPrefix(msg, "server_args=ServerArgs("):
		ev.kind = evArgs
		if err := parseServerArgs(msg, &ev); err != nil {
			return event{}, false, err
		}
	case strings.HasPrefix(msg, "KV Cache is allocated."):
		ev.kind = evKV
		n, err := intAfter(msg, "#tokens: ", false)
		if err == nil {
			err = wantAfterNumber(msg, "#tokens: ", ",", false)
		}
		if err != nil {
			return event{}, false, fmt.Errorf("KV Cache is allocated line: #tokens: %w", err)
		}
		ev.tokens = n
	case strings.HasPrefix(msg, "max_total_num_tokens="):
		ev.kind = evPool
		if err := parsePoolLine(msg, &ev); err != nil {
			return event{}, false, err
		}
	case strings.HasPrefix(msg, "non-default args:"):
		ev.kind = evVArgs
		ev.role = "both" // no kv_transfer_config: one server does both
		if strings.Contains(msg, "kv_transfer_config") || strings.Contains(msg, "kv_role") {
			ev.role = ""
			if m := kvRole.FindStringSubmatch(msg); m != nil {
				switch m[1] {
				case "kv_producer":
					ev.role = "prefill"
				case "kv_consumer":
					ev.role = "decode"
				case "kv_both":
					ev.role = "both"
				default:
					return event{}, false, fmt.Errorf("non-default args: kv_role %q is not kv_producer, kv_consumer or kv_both", m[1])
				}
			}
		}
	case strings.HasPrefix(msg, "GPU KV cache size:"):
		ev.kind = evVPool
		n, err := intAfter(msg, "GPU KV cache size: ", true)
		if err == nil {
			err = wantAfterNumber(msg, "GPU KV cache size: ", " tokens", true)
		}
		if err != nil {
			return event{}, false, fmt.Errorf("GPU KV cache size line: %w", err)
		}
		ev.tokens = n
		if i := strings.Index(msg, "Maximum concurrency for "); i > 0 { // one line in some versions
			c, err := concurrencyContext(msg[i:])
			if err != nil {
				return event{}, false, err
			}
			ev.context = c
		}
	case strings.HasPrefix(msg, "Maximum concurrency for"):
		ev.kind = evVConc
		c, err := concurrencyContext(msg)
		if err != nil {
			return event{}, false, err
		}
		ev.context = c
	case strings.HasPrefix(msg, "Input length (") && strings.Contains(msg, "exceeds the maximum allowed length"):
		// Only the scheduler's own message: a logged prompt that quotes the
		// phrase is not a refused input.
		ev.kind = evCut
		if m := ridField.FindStringSubmatch(msg); m != nil {
			ev.rid = m[1]
		}
	}
	if ev.kind < 0 {
		return event{}, false, nil // a marker inside another message
	}
	if ev.at, err = lr.time(date, clock, vllm); err != nil {
		return event{}, false, err
	}
	ev.key = date + " " + clock + "\x00" + msg
	return ev, true, nil
}

func (lr *lineReader) time(date, clock string, vllm bool) (time.Time, error) {
	s := date + " " + clock
	if len(date) == len("01-02") {
		if lr.year == 0 {
			return time.Time{}, errNoYear{}
		}
		month, _ := strconv.Atoi(date[:2])
		if month < lr.lastMonth {
			lr.yearAdd++
		}
		lr.lastMonth = month
		s = strconv.Itoa(lr.year+lr.yearAdd) + "-" + s
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", strings.Replace(s, ",", ".", 1), lr.loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", date+" "+clock, err)
	}
	return t.UTC(), nil
}

// intAfter reads the integer that follows label in msg (digits, with
// thousands commas when commas is true).
func intAfter(msg, label string, commas bool) (int64, error) {
	i := strings.Index(msg, label)
	if i < 0 {
		return 0, fmt.Errorf("no %q", strings.TrimSpace(label))
	}
	rest := msg[i+len(label):]
	j := numberEnd(rest, commas)
	if j == 0 {
		return 0, fmt.Errorf("%q is not a number of tokens", cut(rest, 24))
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(rest[:j], ",", ""), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive number of tokens", rest[:j])
	}
	return n, nil
}

// numberEnd is the length of the number s begins with; a comma belongs to it
// (with commas) only when a digit follows: "94,320 tokens", "681280, K size".
func numberEnd(s string, commas bool) int {
	j := 0
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || commas && s[j] == ',' && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
		j++
	}
	return j
}

// wantAfterNumber checks that the number after label is followed by suffix
// (a line cut in the middle of its number is not read as a smaller number).
func wantAfterNumber(msg, label, suffix string, commas bool) error {
	rest := msg[strings.Index(msg, label)+len(label):]
	if !strings.HasPrefix(rest[numberEnd(rest, commas):], suffix) {
		return fmt.Errorf("the number is not followed by %q: the line is cut off or not what the engine writes", suffix)
	}
	return nil
}

func concurrencyContext(msg string) (int64, error) {
	c, err := intAfter(msg, "Maximum concurrency for ", true)
	if err == nil {
		err = wantAfterNumber(msg, "Maximum concurrency for ", " tokens per request", true)
	}
	if err != nil {
		return 0, fmt.Errorf("Maximum concurrency line: %w", err)
	}
	return c, nil
}

// parsePoolLine reads SGLang's scheduler line. Versions differ in the
// fields after max_total_num_tokens (chunked_prefill_size,
// available_gpu_mem or available_cpu_mem come and go; the oldest have no
// context_len), so fields are read by name.
func parsePoolLine(msg string, ev *event) error {
	fields := strings.Split(msg, ", ")
	seen := map[string]bool{}
	for i, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" && i == len(fields)-1 {
			continue // old versions end the line with ", "
		}
		k, v, found := strings.Cut(f, "=")
		if !found || k == "" {
			return fmt.Errorf("max_total_num_tokens line: %q is not key=value: the line is cut off or not what SGLang writes", cut(f, 40))
		}
		seen[k] = true
		switch k {
		case "max_total_num_tokens", "context_len":
			n, err := strconv.ParseInt(strings.TrimRight(v, ","), 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("max_total_num_tokens line: %s: %q is not a positive number of tokens", k, v)
			}
			if k == "max_total_num_tokens" {
				ev.tokens = n
			} else {
				ev.context = n
			}
		}
	}
	if !seen["max_total_num_tokens"] {
		return fmt.Errorf("max_total_num_tokens line: no max_total_num_tokens")
	}
	if len(fields) < 2 {
		// Every version writes more fields after it: a lone one may be a
		// number cut short.
		return fmt.Errorf("max_total_num_tokens line: nothing after max_total_num_tokens: the line is cut off or not what SGLang writes")
	}
	return nil
}

// parseServerArgs reads the keyword arguments of the ServerArgs repr that
// preflight needs: disaggregation_mode, model_path, context_length.
func parseServerArgs(msg string, ev *event) error {
	args, err := pythonKwargs(msg[len("server_args=ServerArgs("):])
	if err != nil {
		return fmt.Errorf("server_args line: %w", err)
	}
	if v, ok := args["disaggregation_mode"]; ok {
		switch s, _ := pythonString(v); s {
		case "prefill", "decode":
			ev.role = s
		case "null":
			ev.role = "both"
		default:
			return fmt.Errorf("server_args line: disaggregation_mode=%s is not 'prefill', 'decode' or 'null'", v)
		}
	}
	if v, ok := args["model_path"]; ok {
		ev.model, _ = pythonString(v)
	}
	if v, ok := args["context_length"]; ok && v != "None" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("server_args line: context_length=%s is not a positive number of tokens", v)
		}
		ev.context = n
	}
	return nil
}

// pythonKwargs splits "a='x', b=[1, 2], c=None)" (a dataclass repr after its
// opening parenthesis) into raw values by name, honouring quotes and
// brackets. It wants the closing parenthesis: a line cut short is refused.
func pythonKwargs(s string) (map[string]string, error) {
	out := map[string]string{}
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) && s[i] == ')' {
			if strings.TrimSpace(s[i+1:]) != "" {
				return nil, fmt.Errorf("text after the closing parenthesis: %q", cut(s[i+1:], 40))
			}
			return out, nil
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 {
			return nil, fmt.Errorf("cut off after %d arguments (no closing parenthesis)", len(out))
		}
		key := s[i : i+eq]
		if strings.ContainsAny(key, " ,()'\"[]{}") {
			return nil, fmt.Errorf("%q is not an argument name", cut(key, 40))
		}
		i += eq + 1
		start := i
		depth := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\'' || c == '"' {
				j := i + 1
				for j < len(s) && s[j] != c {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(s) {
					return nil, fmt.Errorf("%s: unterminated string (the line is cut off)", key)
				}
				i = j
				continue
			}
			if c == '(' || c == '[' || c == '{' {
				depth++
			} else if c == ')' || c == ']' || c == '}' {
				if depth == 0 {
					break
				}
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
		if i >= len(s) {
			return nil, fmt.Errorf("%s: cut off (no closing parenthesis)", key)
		}
		out[key] = strings.TrimSpace(s[start:i])
		if s[i] == ',' {
			i++
		}
	}
}

// pythonString unquotes a Python str repr ('x' or "x").
func pythonString(v string) (string, bool) {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		inner := v[1 : len(v)-1]
		var b strings.Builder
		for i := 0; i < len(inner); i++ {
			if inner[i] == '\\' && i+1 < len(inner) {
				i++
			}
			b.WriteByte(inner[i])
		}
		return b.String(), true
	}
	return v, false
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
