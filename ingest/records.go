package ingest

import (
	"fmt"
	"time"

	"github.com/leakmap/leakmap/ingest/layouts"
)

// recordFields are the fields of a source record, in the order of their
// columns in source_records (casedb/schema.sql).
var recordFields = []string{
	"rid", "bootstrap_room", "bootstrap_host", "instance", "ts", "end_ts", "tenant_id", "model",
	"prompt_tokens", "completion_tokens", "cached_tokens", "status", "finish_type", "finish_message",
	"prompt_text", "response_text",
}

// Indexes of record fields in a record's values.
const (
	rRID = iota
	rRoom
	rBootstrapHost
	rInstance
	rTS
	rEndTS
	rTenant
	rModel
	rPromptTokens
	rCompletionTokens
	rCachedTokens
	rStatus
	rFinishType
	rFinishMessage
	rPromptText
	rResponseText
)

// recordRequired: what every record of a role must have. A gateway record
// is a customer's call (who, what, how big); an engine record is a host's
// (which request, when, where, which model). An engine record may lack its
// sizes (a request whose finished event is not in the file).
func recordRequired(role string) []string {
	if role == layouts.RoleGateway {
		return []string{"rid", "ts", "tenant_id", "model", "prompt_tokens"}
	}
	return []string{"rid", "ts", "model", "instance"}
}

func textField(f string) bool {
	return f == "prompt_text" || f == "response_text" || f == "finish_message"
}

// recordRow maps one record to a source_records row.
func recordRow(rec map[string]any, m *Mapping) (values, error) {
	var v values
	for i := range recordFields {
		val, err := m.field(i, rec)
		if err != nil {
			return v, err
		}
		v[i] = val
	}
	// One of the two times from the other and the duration: a request's
	// events cut apart by an hourly rotation, or a gateway that logs a
	// start and a duration.
	if m.durPath != nil && (v[rEndTS] == nil) != (v[rTS] == nil) {
		if d, ok := lookupPath(rec, m.durPath); ok {
			var err error
			if v[rTS] != nil {
				v[rEndTS], err = addDuration(v[rTS].(time.Time), d, m.DurationUnit)
			} else {
				v[rTS], err = subDuration(v[rEndTS].(time.Time), d, m.DurationUnit)
			}
			if err != nil {
				return v, fmt.Errorf("%s: %w", m.DurationField, err)
			}
		}
	}
	for _, f := range m.required {
		i := recordIndex(f)
		if v[i] == nil {
			return v, missingErr(m, f)
		}
	}
	return v, nil
}

func recordIndex(f string) int {
	for i, c := range recordFields {
		if c == f {
			return i
		}
	}
	panic("ingest: no record field " + f)
}

// subDuration returns end - d.
func subDuration(end time.Time, d any, unit string) (time.Time, error) {
	later, err := addDuration(end, d, unit)
	if err != nil {
		return time.Time{}, err
	}
	return end.Add(-later.Sub(end)).UTC().Truncate(time.Microsecond), nil
}
