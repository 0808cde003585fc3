package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/leakmap/leakmap/errs"
)

// sampleRecords is how many records of a file's head the field check reads.
const sampleRecords = 1000

// checkFields hashes and identifies a file and checks that the mapping finds
// every required field in it. Its errors are errs.Input naming the file.
func checkFields(ctx context.Context, db *sql.DB, path string, m *Mapping, format string) (*fileInfo, error) {
	fi := &fileInfo{path: path, name: filepath.Base(path)}
	var err error
	if fi.size, fi.sha256, err = hashFile(path); err != nil {
		return nil, errs.Input("%s: %w", path, err)
	}
	if err := detect(fi, format); err != nil {
		return nil, errs.Input("%s: %w", path, err)
	}
	if m.Layout == layoutEngine && fi.format != formatJSONL && fi.format != formatEmpty {
		return nil, errs.Input("%s: layout %s reads JSON Lines, this file is %s", path, m.name, fi.format)
	}
	if fi.format == formatJSONL && m.records == nil && prettyJSON(fi.head) {
		return nil, errs.Input("%s: not one record per line: %s; layout %s reads one JSON object a line", path, describeDocument(fi.head), m.name)
	}
	if m.toRecords {
		if err := sampleHead(ctx, fi, m); err != nil {
			return nil, err
		}
		return fi, nil
	}
	var missing []string
	switch fi.format {
	case formatJSONL:
		missing = missingInJSONL(fi.head, m)
	case formatCSV:
		header, err := csvHeader(fi.head)
		if err != nil {
			return nil, errs.Input("%s: not a log: %w", path, err)
		}
		missing = missingColumns(header, m)
	case formatParquet:
		cols, err := parquetColumns(ctx, db, path)
		if err != nil {
			return nil, errs.Input("%s: not a log: %w", path, err)
		}
		missing = missingColumns(cols, m)
	}
	if len(missing) > 0 {
		return nil, errs.Input("%s: not a request log (preset %s): %s", path, m.name, missingMessage(missing, m, fi.format))
	}
	return fi, nil
}

// missingColumns lists the required fields whose source column is absent.
func missingColumns(cols []string, m *Mapping) []string {
	have := map[string]bool{}
	for _, c := range cols {
		have[c] = true
	}
	var out []string
	for _, f := range requiredFields {
		if m.Constants[f] != "" {
			continue
		}
		src := m.source(f)
		head, _, _ := strings.Cut(src, ".")
		if src == "" || (!have[src] && !have[head]) {
			out = append(out, f)
		}
	}
	return out
}

// missingMessage says, on one line, which required fields have no source
// and how to give them one.
func missingMessage(fields []string, m *Mapping, format string) string {
	what := "field"
	if format == formatCSV || format == formatParquet {
		what = "column"
	}
	var parts []string
	model := false
	for _, f := range fields {
		src := m.source(f)
		switch {
		case f == "tenant_id" && m.Layout == layoutEngine:
			parts = append(parts, fmt.Sprintf("no tenant (no request.received event has %s; the engine knows tenants only when the deployment passes one)", strings.TrimPrefix(src, "received.")))
		case src == "":
			parts = append(parts, "no source for "+f)
		default:
			parts = append(parts, fmt.Sprintf("no %s %q for %s", what, src, f))
		}
		model = model || f == "model"
	}
	hint := "map them with --mapping FILE (fields: {canonical_field: your_" + what + "}) or pick another --preset"
	if m.Layout == layoutEngine {
		hint = "map them with --mapping FILE (layout: engine, fields: {tenant_id: received.obj.your_label})"
	}
	if model {
		hint += "; a log without a model also takes --model NAME"
	}
	return strings.Join(parts, ", ") + "; " + hint
}

// missingInJSONL parses the records of a file's head and lists the required
// fields that none of them has. A record that does not parse says nothing
// (it will be rejected on its own); a file whose head has no parseable
// record is loaded, and its lines rejected one by one.
func missingInJSONL(head []byte, m *Mapping) []string {
	lines := bytes.Split(head, []byte("\n"))
	if len(head) == sniffSize && len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	found := map[string]bool{}
	kinds := map[string]bool{} // engine events seen
	parsed := 0
	for _, b := range lines {
		if parsed >= sampleRecords {
			break
		}
		if isBlank(b) {
			continue
		}
		obj, err := parseJSONObject(bytes.TrimSuffix(b, []byte("\r")))
		if err != nil {
			continue
		}
		parsed++
		rec := obj
		if m.Layout == layoutEngine {
			kind, _ := obj["event"].(string)
			switch kind {
			case m.events.Received:
				rec = map[string]any{"rid": obj["rid"], "received": obj}
				kinds["received"] = true
			case m.events.Finished:
				rec = map[string]any{"rid": obj["rid"], "finished": obj}
				kinds["finished"] = true
			default:
				continue
			}
		}
		for _, f := range requiredFields {
			if src := m.source(f); src != "" {
				if _, ok := lookup(rec, strings.Split(src, ".")); ok {
					found[f] = true
				}
			}
		}
	}
	if parsed == 0 {
		return nil
	}
	var out []string
	for _, f := range requiredFields {
		if found[f] || m.Constants[f] != "" {
			continue
		}
		src := m.source(f)
		if m.Layout == layoutEngine && src != "" {
			// An event kind the head does not show yet proves nothing.
			if kind, _, ok := strings.Cut(src, "."); ok && (kind == "received" || kind == "finished") && !kinds[kind] {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// parquetColumns lists a Parquet file's top-level columns.
func parquetColumns(ctx context.Context, db *sql.DB, path string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "DESCRIBE SELECT * FROM read_parquet(?)", path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		if s, ok := vals[0].(string); ok {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}
