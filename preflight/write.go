package preflight

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/leakmap/leakmap/incident"
)

// The output files' headers (DESIGN.md, "Preflight").
var (
	CapacityHeader = []string{"instance", "role", "pool_tokens", "valid_from"}
	FindingsHeader = []string{"instance", "role", "pool_tokens", "context_tokens", "valid_from", "valid_until", "finding", "cut_inputs"}
)

// CapacityCSV is capacity.csv: the incident file's timeline format, rows
// sorted by instance, role, valid_from. Values are written exactly (a
// machine file leakmap reads back, so no spreadsheet escaping).
func (r *Result) CapacityCSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(CapacityHeader)
	for _, row := range r.Timeline {
		w.Write([]string{row.Instance, row.Role, strconv.FormatInt(row.Pool, 10), incident.FormatTime(row.From)})
	}
	w.Flush()
	return b.Bytes()
}

// FindingsCSV is findings.csv: one row per timeline row (or host of unknown
// role) whose pool is below its context; an open period has an empty
// valid_until; cut_inputs counts the inputs that host refused as too long in
// the period (on each of the two rows of a server doing both).
func (r *Result) FindingsCSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(FindingsHeader)
	for _, row := range r.Findings {
		until := ""
		if !row.Until.IsZero() {
			until = incident.FormatTime(row.Until)
		}
		w.Write([]string{row.Instance, row.Role, strconv.FormatInt(row.Pool, 10), strconv.FormatInt(row.Context, 10),
			incident.FormatTime(row.From), until, FindingPoolBelowContext, strconv.FormatInt(row.Cut, 10)})
	}
	w.Flush()
	return b.Bytes()
}

// WriteFiles writes capacity.csv and findings.csv into dir (created if
// needed) and returns their paths.
func (r *Result) WriteFiles(dir string) (capacity, findings string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("preflight: %w", err)
	}
	capacity, findings = filepath.Join(dir, "capacity.csv"), filepath.Join(dir, "findings.csv")
	if err := os.WriteFile(capacity, r.CapacityCSV(), 0o644); err != nil {
		return "", "", fmt.Errorf("preflight: %w", err)
	}
	if err := os.WriteFile(findings, r.FindingsCSV(), 0o644); err != nil {
		return "", "", fmt.Errorf("preflight: %w", err)
	}
	return capacity, findings, nil
}

// WriteTable writes one line per start: host, role, pool, context, period
// and the verdict.
func (r *Result) WriteTable(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "instance\trole\tpool\tcontext\tfrom\tuntil\tcheck")
	for _, s := range r.Starts {
		ctx, until, check := "?", "(running)", "ok"
		if s.Context > 0 {
			ctx = thousands(s.Context)
		}
		if !s.Until.IsZero() {
			until = incident.FormatTime(s.Until)
		}
		switch {
		case s.Finding():
			inputs := "inputs"
			if s.Cut == 1 {
				inputs = "input"
			}
			check = fmt.Sprintf("POOL BELOW CONTEXT (%s tokens short), %d %s refused", thousands(s.Context-s.Pool), s.Cut, inputs)
		case s.Context == 0:
			check = "context not stated: not checked"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Instance, s.Role, thousands(s.Pool), ctx, incident.FormatTime(s.From), until, check)
	}
	return w.Flush()
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
