package report

import (
	"context"
	"testing"
)

// On a case joined from real-layout logs the summary counts the
// unattributed requests (tenant_id ”) apart and the fingerprint's figures;
// a canonical case shows none of these lines.
func TestSummaryCountsUnattributedApart(t *testing.T) {
	db, inc := newCase(t)
	items := func() map[string]any {
		d, err := loadCase(context.Background(), db, inc, testAsOf)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for _, it := range summaryItems(d) {
			m[it.Label] = it.Value
		}
		return m
	}
	if _, ok := items()["Unattributed requests (engine records no gateway record claims)"]; ok {
		t.Error("a canonical case shows the join's figures")
	}
	if _, err := db.Exec(`
INSERT INTO requests SELECT 900000 + row_number() OVER (), 'chatcmpl-u' || row_number() OVER (), ts, end_ts, '', model,
       prompt_tokens, completion_tokens, status, prefill_instance, decode_instance, NULL, NULL, 1, 9, row_number() OVER ()
FROM requests ORDER BY row_id LIMIT 3;
INSERT INTO joined_requests SELECT row_id, true, false FROM requests WHERE row_id > 900000;
INSERT INTO affected_requests SELECT request_id, row_id, tenant_id, ts, end_ts, model, prompt_tokens, completion_tokens,
       681280, prefill_instance, decode_instance, 0 FROM requests WHERE row_id = 900001;
INSERT INTO trigger_checks SELECT row_id, request_id, ts, true, false, true, prompt_tokens, 681280, 'cut_at_prefill',
       'cut at prefill within the capacity in force' FROM requests WHERE row_id = 900001;`); err != nil {
		t.Fatal(err)
	}
	m := items()
	for label, want := range map[string]int64{
		"Unattributed requests (engine records no gateway record claims)":                     3,
		"Requests joined from gateway and engine records (Join sheet)":                        3,
		"Unattributed affected requests (no gateway record names the tenant; never notified)": 1,
		"Affected requests whose prefill record cut the prompt":                               1,
		"Calls where the capacity test and the cut disagree (trigger_disagreements.csv)":      1,
	} {
		if got, ok := m[label].(int64); !ok || got != want {
			t.Errorf("%s = %v, want %d", label, m[label], want)
		}
	}
}
