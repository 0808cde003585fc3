package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// srec is a source record as a layout reader writes it into source_records;
// zero values are NULL (except file and line).
type srec struct {
	file, line          int64
	role                string
	rid                 string
	room                int64
	instance            string
	ts, end             string
	tenant, model       string
	prompt, completion  int64 // -1: NULL
	status              int64
	finish, message     string
	promptText, outText string
}

var sourceOf = map[string]string{"gateway": "sources[0]", "prefill": "sources[1]", "decode": "sources[2]", "engine": "sources[3]"}
var layoutOf = map[string]string{"gateway": "litellm-spendlogs", "prefill": "sglang", "decode": "sglang", "engine": "sglang"}

func insertRecords(t *testing.T, db *sql.DB, recs ...srec) {
	t.Helper()
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	num := func(n int64) any {
		if n < 0 {
			return nil
		}
		return n
	}
	nz := func(n int64) any {
		if n == 0 {
			return nil
		}
		return n
	}
	tm := func(s string) any {
		if s == "" {
			return nil
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, r := range recs {
		id := r.file<<32 | r.line
		_, err := db.Exec(`INSERT INTO source_records VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9, $10, $11, $12, $13, NULL,
			$14, $15, $16, $17, $18, hash($5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16), $19, $20)`,
			id, sourceOf[r.role], layoutOf[r.role], r.role, str(r.rid), nz(r.room), str(r.instance), tm(r.ts), tm(r.end),
			str(r.tenant), str(r.model), num(r.prompt), num(r.completion), nz(r.status), str(r.finish), str(r.message),
			str(r.promptText), str(r.outText), r.file, r.line)
		if err != nil {
			t.Fatalf("insert %+v: %v", r, err)
		}
	}
}

const cutMsg = "Input length (812004 tokens) exceeds the maximum allowed length (681279 tokens). Use a shorter input or enable --allow-auto-truncate."

// Records written like the real ones: LiteLLM's request_id is the decode
// rid; prefill and decode have their own rids and share bootstrap_room; the
// prefill of an over-long prompt says prompt_tokens 1 and aborts with 400.
func gatewayRec(line int64, id, ts, tenant string, prompt, completion, status int64) srec {
	return srec{file: 101, line: line, role: "gateway", rid: id, ts: ts, end: addSec(ts, 7), tenant: tenant,
		model: "glm-5.3", prompt: prompt, completion: completion, status: status, promptText: "prompt of " + id}
}

func prefillRec(line int64, rid string, room int64, host, ts string, prompt int64) srec {
	r := srec{file: 102, line: line, role: "prefill", rid: rid, room: room, instance: host, ts: ts, end: addSec(ts, 1),
		model: "glm-5.3", prompt: prompt, completion: 1, finish: "length"}
	if prompt == 1 {
		r.finish, r.status, r.message = "abort", 400, cutMsg
	}
	return r
}

func decodeRec(line int64, rid string, room int64, host, ts string, prompt, completion int64) srec {
	return srec{file: 103, line: line, role: "decode", rid: rid, room: room, instance: host, ts: ts, end: addSec(ts, 6),
		model: "glm-5.3", prompt: prompt, completion: completion, finish: "stop"}
}

func addSec(ts string, s int) string {
	t, _ := time.Parse(time.RFC3339Nano, ts)
	return t.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339Nano)
}

// joinedDump lists the joined requests, one line each, sorted by request_id.
func joinedDump(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT r.request_id, r.tenant_id, r.model, r.prompt_tokens, coalesce(r.completion_tokens::VARCHAR, '-'),
		coalesce(r.status::VARCHAR, '-'), coalesce(r.prefill_instance, '-'), coalesce(r.decode_instance, '-'),
		rfc3339(r.ts), coalesce(rfc3339(r.end_ts), '-'), coalesce(j.held_slots::VARCHAR, '-'), j.cut_at_prefill
		FROM requests r JOIN joined_requests j USING (row_id) ORDER BY r.request_id, r.row_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		v := make([]any, 12)
		p := make([]any, 12)
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = fmt.Sprint(x)
		}
		out = append(out, strings.Join(s, " "))
	}
	return out
}

// reportDump lists join_report as "role outcome reason records".
func reportDump(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT role, outcome, reason, records FROM join_report ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var role, outcome, reason string
		var n int64
		if err := rows.Scan(&role, &outcome, &reason, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %s: %d", role, outcome, reason, n))
	}
	return out
}

func TestJoin(t *testing.T) {
	const (
		t0  = "2026-09-02T08:14:03.512Z"
		t0d = "2026-09-02T08:14:03.9Z" // the decode host's clock, a little later
	)
	tests := []struct {
		name    string
		opts    JoinOptions
		recs    []srec
		want    []string // joinedDump
		report  []string
		sources int64 // request_sources rows
	}{
		{
			name: "gateway, cut prefill and decode: one request, the fingerprint",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 812004, 377, 200),
				prefillRec(1, "chatcmpl-p1", 51122093, "glm-p1", t0, 1),
				decodeRec(1, "chatcmpl-d1", 51122093, "glm-d3", t0d, 812004, 377),
			},
			want: []string{"chatcmpl-d1 team-a glm-5.3 812004 377 200 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true true"},
			report: []string{"decode matched by shared id: 1", "gateway matched by shared id: 1",
				"prefill matched by shared id: 1"},
			sources: 3,
		},
		{
			name: "customer's size wins over the decode's; gateway failure is not served but held slots",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 900000, 10, 500),
				prefillRec(1, "chatcmpl-p1", 7, "glm-p1", t0, 1),
				decodeRec(1, "chatcmpl-d1", 7, "glm-d3", t0d, 899999, 10),
			},
			want: []string{"chatcmpl-d1 team-a glm-5.3 900000 10 500 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false"},
			report: []string{"decode matched by shared id: 1", "gateway matched by shared id: 1",
				"prefill matched by shared id: 1"},
			sources: 3,
		},
		{
			name: "Cloudflare ids match no rid: model, time and sizes",
			recs: []srec{
				gatewayRec(2, "01J7Z3CF0000", "2026-09-02T08:14:02.6Z", "acct-9", 5000, 40, 200),
				// another call of the same size, 3 s away: outside the tolerance
				gatewayRec(3, "01J7Z3CF0001", "2026-09-02T08:14:07Z", "acct-9", 5000, 40, 200),
				prefillRec(1, "chatcmpl-p1", 11, "glm-p1", t0, 5000),
				decodeRec(1, "chatcmpl-d1", 11, "glm-d3", t0d, 5000, 40),
			},
			want: []string{
				"01J7Z3CF0000 acct-9 glm-5.3 5000 40 200 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false",
				"01J7Z3CF0001 acct-9 glm-5.3 5000 40 200 - - 2026-09-02T08:14:07Z 2026-09-02T08:14:14Z - false",
			},
			report: []string{"decode matched by model, time and sizes: 1", "gateway matched by model, time and sizes: 1",
				"gateway unmatched no engine record: 1", "prefill matched by model, time and sizes: 1"},
			sources: 4,
		},
		{
			name: "a failure the gateway logged with 0 tokens and its own id: joined to the aborted engine call by model, time and status",
			recs: []srec{
				gatewayRec(2, "a1b2c3-proxy-call", t0, "team-a", 0, 0, 500),
				prefillRec(1, "chatcmpl-p1", 11, "glm-p1", t0, 5000),
				{file: 103, line: 1, role: "decode", rid: "chatcmpl-d1", room: 11, instance: "glm-d3", ts: t0d, end: addSec(t0d, 2),
					model: "glm-5.3", prompt: 5000, completion: 0, status: 500, finish: "abort", message: "Internal server error: KV transfer failed"},
				// a call that finished normally, as near: not the failure's
				decodeRec(2, "chatcmpl-d2", 12, "glm-d4", t0d, 7000, 40),
				// a failure of another status: the engine aborted with 500, the customer got 429
				gatewayRec(3, "d4e5f6-proxy-call", "2026-09-02T08:20:00Z", "team-b", 0, 0, 429),
				{file: 103, line: 3, role: "decode", rid: "chatcmpl-d3", room: 13, instance: "glm-d3", ts: "2026-09-02T08:20:00.1Z",
					end: "2026-09-02T08:20:01Z", model: "glm-5.3", prompt: 300, completion: 0, status: 500, finish: "abort"},
			},
			want: []string{
				"a1b2c3-proxy-call team-a glm-5.3 5000 0 500 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:05.900000Z false false",
				"chatcmpl-d2  glm-5.3 7000 40 200 - glm-d4 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false",
				"chatcmpl-d3  glm-5.3 300 0 500 - glm-d3 2026-09-02T08:20:00.100000Z 2026-09-02T08:20:01Z false false",
				"d4e5f6-proxy-call team-b glm-5.3 0 0 429 - - 2026-09-02T08:20:00Z 2026-09-02T08:20:07Z - false",
			},
			report: []string{"decode matched by model, time and failure status: 1",
				"decode unmatched no prefill record; no gateway record: 2",
				"gateway matched by model, time and failure status: 1", "gateway unmatched no engine record: 1",
				"prefill matched by model, time and failure status: 1"},
			sources: 6,
		},
		{
			name: "two aborted engine calls as near a failure logged without sizes: ambiguous",
			recs: []srec{
				gatewayRec(2, "a1b2c3-proxy-call", t0, "team-a", 0, 0, 500),
				{file: 103, line: 1, role: "decode", rid: "chatcmpl-d1", room: 11, instance: "glm-d3", ts: "2026-09-02T08:14:04.512Z",
					end: "2026-09-02T08:14:05Z", model: "glm-5.3", prompt: 5000, completion: 0, status: 500, finish: "abort"},
				{file: 103, line: 2, role: "decode", rid: "chatcmpl-d2", room: 12, instance: "glm-d4", ts: "2026-09-02T08:14:02.512Z",
					end: "2026-09-02T08:14:03Z", model: "glm-5.3", prompt: 6000, completion: 0, status: 500, finish: "abort"},
			},
			want: []string{
				"a1b2c3-proxy-call team-a glm-5.3 0 0 500 - - 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:10.512000Z - false",
				"chatcmpl-d1  glm-5.3 5000 0 500 - glm-d3 2026-09-02T08:14:04.512000Z 2026-09-02T08:14:05Z false false",
				"chatcmpl-d2  glm-5.3 6000 0 500 - glm-d4 2026-09-02T08:14:02.512000Z 2026-09-02T08:14:03Z false false",
			},
			report: []string{"decode ambiguous no unique failed gateway record without sizes within 2s: 2",
				"gateway ambiguous no unique aborted engine record within 2s of a failure logged without sizes: 1"},
			sources: 3,
		},
		{
			name: "two engine calls equally near the gateway call: ambiguous, never guessed",
			recs: []srec{
				gatewayRec(2, "01J7Z3CF0000", t0, "acct-9", 5000, 40, 200),
				decodeRec(1, "chatcmpl-d1", 11, "glm-d3", "2026-09-02T08:14:04.512Z", 5000, 40),
				decodeRec(2, "chatcmpl-d2", 12, "glm-d4", "2026-09-02T08:14:02.512Z", 5000, 40),
				prefillRec(1, "chatcmpl-p1", 11, "glm-p1", "2026-09-02T08:14:04.5Z", 5000),
				prefillRec(2, "chatcmpl-p2", 12, "glm-p1", "2026-09-02T08:14:02.5Z", 5000),
			},
			want: []string{
				"01J7Z3CF0000 acct-9 glm-5.3 5000 40 200 - - 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:10.512000Z - false",
				"chatcmpl-d1  glm-5.3 5000 40 200 glm-p1 glm-d3 2026-09-02T08:14:04.512000Z 2026-09-02T08:14:10.512000Z true false",
				"chatcmpl-d2  glm-5.3 5000 40 200 glm-p1 glm-d4 2026-09-02T08:14:02.512000Z 2026-09-02T08:14:08.512000Z true false",
			},
			report: []string{"decode ambiguous no unique gateway record within 2s of equal sizes: 2",
				"gateway ambiguous no unique engine record within 2s of equal sizes: 1",
				"prefill ambiguous no unique gateway record within 2s of equal sizes: 2"},
			sources: 5,
		},
		{
			name: "nearest engine call wins when it is unique",
			recs: []srec{
				gatewayRec(2, "01J7Z3CF0000", t0, "acct-9", 5000, 40, 200),
				decodeRec(1, "chatcmpl-d1", 11, "glm-d3", "2026-09-02T08:14:03.612Z", 5000, 40),
				decodeRec(2, "chatcmpl-d2", 12, "glm-d4", "2026-09-02T08:14:05.012Z", 5000, 40),
			},
			want: []string{
				"01J7Z3CF0000 acct-9 glm-5.3 5000 40 200 - glm-d3 2026-09-02T08:14:03.612000Z 2026-09-02T08:14:09.612000Z true false",
				"chatcmpl-d2  glm-5.3 5000 40 200 - glm-d4 2026-09-02T08:14:05.012000Z 2026-09-02T08:14:11.012000Z true false",
			},
			report: []string{"decode ambiguous no unique gateway record within 2s of equal sizes: 1",
				"decode unmatched no prefill record: 1", "gateway matched by model, time and sizes: 1"},
			sources: 3,
		},
		{
			name: "room repeated within the tolerance: the decode's prefill is not guessed",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 812004, 377, 200),
				decodeRec(1, "chatcmpl-d1", 99, "glm-d3", t0d, 812004, 377),
				prefillRec(1, "chatcmpl-p1", 99, "glm-p1", t0, 1),
				prefillRec(2, "chatcmpl-p2", 99, "glm-p2", "2026-09-02T08:14:20Z", 3000),
			},
			want: []string{
				"chatcmpl-d1 team-a glm-5.3 812004 377 200 - glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false",
				"chatcmpl-p1  glm-5.3 1 1 400 glm-p1 - 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:04.512000Z - false",
				"chatcmpl-p2  glm-5.3 3000 1 200 glm-p2 - 2026-09-02T08:14:20Z 2026-09-02T08:14:21Z - false",
			},
			report: []string{"decode ambiguous bootstrap_room repeated within 30s: 1", "gateway matched by shared id: 1",
				"prefill ambiguous bootstrap_room repeated within 30s: 2"},
			sources: 4,
		},
		{
			name: "room reused weeks apart: each pair joins its own",
			recs: []srec{
				prefillRec(1, "chatcmpl-p1", 42, "glm-p1", "2026-08-28T10:00:00Z", 1000),
				decodeRec(1, "chatcmpl-d1", 42, "glm-d1", "2026-08-28T10:00:00.2Z", 1000, 5),
				prefillRec(2, "chatcmpl-p2", 42, "glm-p2", "2026-09-08T10:00:00Z", 2000),
				decodeRec(2, "chatcmpl-d2", 42, "glm-d2", "2026-09-08T10:00:00.2Z", 2000, 6),
			},
			want: []string{
				"chatcmpl-d1  glm-5.3 1000 5 200 glm-p1 glm-d1 2026-08-28T10:00:00.200000Z 2026-08-28T10:00:06.200000Z true false",
				"chatcmpl-d2  glm-5.3 2000 6 200 glm-p2 glm-d2 2026-09-08T10:00:00.200000Z 2026-09-08T10:00:06.200000Z true false",
			},
			report:  []string{"decode unmatched no gateway record: 2", "prefill unmatched no gateway record: 2"},
			sources: 4,
		},
		{
			name: "tolerance from the options: a pair 5 s apart is no pair under 1 s",
			opts: JoinOptions{RoomTolerance: time.Second},
			recs: []srec{
				prefillRec(1, "chatcmpl-p1", 42, "glm-p1", "2026-08-28T10:00:00Z", 1000),
				decodeRec(1, "chatcmpl-d1", 42, "glm-d1", "2026-08-28T10:00:05Z", 1000, 5),
			},
			want: []string{
				"chatcmpl-d1  glm-5.3 1000 5 200 - glm-d1 2026-08-28T10:00:05Z 2026-08-28T10:00:11Z true false",
				"chatcmpl-p1  glm-5.3 1000 1 200 glm-p1 - 2026-08-28T10:00:00Z 2026-08-28T10:00:01Z - false",
			},
			report: []string{"decode unmatched no prefill record; no gateway record: 1",
				"prefill unmatched no decode record; no gateway record: 1"},
			sources: 2,
		},
		{
			name: "lost prefill: the request has no prefill instance",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 812004, 377, 200),
				decodeRec(1, "chatcmpl-d1", 5, "glm-d3", t0d, 812004, 377),
			},
			want:    []string{"chatcmpl-d1 team-a glm-5.3 812004 377 200 - glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false"},
			report:  []string{"decode unmatched no prefill record: 1", "gateway matched by shared id: 1"},
			sources: 2,
		},
		{
			name: "lost decode: the cut prefill joins the gateway by the length its abort message gives",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 812004, 377, 200),
				prefillRec(1, "chatcmpl-p1", 5, "glm-p1", "2026-09-02T08:14:03.7Z", 1),
			},
			want: []string{
				"chatcmpl-d1 team-a glm-5.3 812004 377 200 glm-p1 - 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:10.512000Z - true",
			},
			report:  []string{"gateway matched by model, time and sizes: 1", "prefill unmatched no decode record: 1"},
			sources: 2,
		},
		{
			name: "lost decode, prefill not near the gateway call: each alone, the cut prefill not served",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 812004, 377, 200),
				prefillRec(1, "chatcmpl-p1", 5, "glm-p1", "2026-09-02T08:14:06Z", 1),
			},
			want: []string{
				"chatcmpl-d1 team-a glm-5.3 812004 377 200 - - 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:10.512000Z - false",
				"chatcmpl-p1  glm-5.3 1 1 400 glm-p1 - 2026-09-02T08:14:06Z 2026-09-02T08:14:07Z - false",
			},
			report:  []string{"gateway unmatched no engine record: 1", "prefill unmatched no decode record; no gateway record: 1"},
			sources: 2,
		},
		{
			name: "duplicated gateway rows: one request, both records kept in its sources",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 5000, 40, 200),
				gatewayRec(9, "chatcmpl-d1", t0, "team-a", 5000, 40, 200),
				{file: 104, line: 2, role: "gateway", rid: "chatcmpl-d1", ts: "2026-09-02T10:14:03.512+02:00", end: addSec(t0, 7),
					tenant: "team-a", model: "glm-5.3", prompt: 5000, completion: 40, status: 200},
				prefillRec(1, "chatcmpl-p1", 5, "glm-p1", t0, 5000),
				decodeRec(1, "chatcmpl-d1", 5, "glm-d3", t0d, 5000, 40),
			},
			want: []string{"chatcmpl-d1 team-a glm-5.3 5000 40 200 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false"},
			report: []string{"decode matched by shared id: 1", "gateway matched by shared id: 1", "gateway matched duplicate: 2",
				"prefill matched by shared id: 1"},
			sources: 5,
		},
		{
			name: "a decode record split by the hourly rotation: its received half joins the finished one",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 812004, 377, 200),
				prefillRec(1, "chatcmpl-p1", 5, "glm-p1", t0, 1),
				// glm-d3_0.log.2026-09-02_08: the received event only
				{file: 103, line: 9, role: "decode", rid: "chatcmpl-d1", room: 5, instance: "glm-d3", ts: t0d, model: "glm-5.3", prompt: -1, completion: -1},
				// glm-d3_0.log.2026-09-02_09: the finished event
				{file: 106, line: 1, role: "decode", rid: "chatcmpl-d1", room: 5, instance: "glm-d3", ts: "2026-09-02T08:14:05Z", end: "2026-09-02T09:00:01Z",
					model: "glm-5.3", prompt: 812004, completion: 377, finish: "stop"},
			},
			want: []string{"chatcmpl-d1 team-a glm-5.3 812004 377 200 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T09:00:01Z true true"},
			report: []string{"decode matched by shared id: 1", "decode matched duplicate: 1",
				"gateway matched by shared id: 1", "prefill matched by shared id: 1"},
			sources: 4,
		},
		{
			name: "engine records without a gateway: unattributed, still served and holding slots",
			recs: []srec{
				prefillRec(1, "chatcmpl-p1", 5, "glm-p1", t0, 1),
				decodeRec(1, "chatcmpl-d1", 5, "glm-d3", t0d, 812004, 377),
			},
			want:    []string{"chatcmpl-d1  glm-5.3 812004 377 200 glm-p1 glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true true"},
			report:  []string{"decode unmatched no gateway record: 1", "prefill unmatched no gateway record: 1"},
			sources: 2,
		},
		{
			name: "decode abort without a gateway: its status, no slots held; an engine-role server is both instances",
			recs: []srec{
				{file: 103, line: 1, role: "decode", rid: "chatcmpl-d1", room: 5, instance: "glm-d3", ts: t0d, end: addSec(t0d, 1),
					model: "glm-5.3", prompt: 700, completion: 0, status: 503, finish: "abort", message: "server overloaded"},
				{file: 105, line: 1, role: "engine", rid: "chatcmpl-e1", instance: "glm-e1", ts: t0, end: addSec(t0, 2),
					model: "glm-5.3", prompt: 800, completion: 9, finish: "stop", tenant: "from-custom-labels"},
				{file: 105, line: 2, role: "engine", rid: "chatcmpl-e2", instance: "glm-e1", ts: t0, model: "glm-5.3", prompt: 800, completion: -1},
			},
			want: []string{
				"chatcmpl-d1  glm-5.3 700 0 503 - glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:04.900000Z false false",
				"chatcmpl-e1 from-custom-labels glm-5.3 800 9 200 glm-e1 glm-e1 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:05.512000Z true false",
				"chatcmpl-e2  glm-5.3 800 - - glm-e1 glm-e1 2026-09-02T08:14:03.512000Z - - false",
			},
			report:  []string{"decode unmatched no prefill record; no gateway record: 1", "engine unmatched no gateway record: 2"},
			sources: 3,
		},
		{
			name: "a gateway id shared by two decode records: ambiguous",
			recs: []srec{
				gatewayRec(2, "chatcmpl-d1", t0, "team-a", 5000, 40, 200),
				decodeRec(1, "chatcmpl-d1", 5, "glm-d3", t0d, 5000, 40),
				decodeRec(2, "chatcmpl-d1", 6, "glm-d4", "2026-09-03T08:00:00Z", 6000, 40),
			},
			want: []string{
				"chatcmpl-d1 team-a glm-5.3 5000 40 200 - - 2026-09-02T08:14:03.512000Z 2026-09-02T08:14:10.512000Z - false",
				"chatcmpl-d1  glm-5.3 5000 40 200 - glm-d3 2026-09-02T08:14:03.900000Z 2026-09-02T08:14:09.900000Z true false",
				"chatcmpl-d1  glm-5.3 6000 40 200 - glm-d4 2026-09-03T08:00:00Z 2026-09-03T08:00:06Z true false",
			},
			report:  []string{"decode ambiguous id shared by several records: 2", "gateway ambiguous id shared by several records: 1"},
			sources: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openCase(t)
			insertRecords(t, db, tc.recs...)
			res, err := Join(context.Background(), db, nil, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := joinedDump(t, db)
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("requests:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
			}
			if res.Requests != int64(len(tc.want)) {
				t.Errorf("JoinResult.Requests = %d, want %d", res.Requests, len(tc.want))
			}
			rep := reportDump(t, db)
			slices.Sort(tc.report)
			if !slices.Equal(rep, tc.report) {
				t.Errorf("join_report:\n got %s\nwant %s", strings.Join(rep, "\n     "), strings.Join(tc.report, "\n     "))
			}
			var total, inReport int64
			if err := db.QueryRow(`SELECT count(*), (SELECT sum(records) FROM join_report) FROM source_records`).Scan(&total, &inReport); err != nil {
				t.Fatal(err)
			}
			if total != inReport {
				t.Errorf("join_report counts %d records, source_records holds %d", inReport, total)
			}
			if n := count(t, db, `SELECT count(*) FROM request_sources`); n != tc.sources {
				t.Errorf("request_sources: %d rows, want %d", n, tc.sources)
			}
			if n := count(t, db, `SELECT count(*) - count(DISTINCT row_id) FROM requests`); n != 0 {
				t.Errorf("%d requests share a row_id", n)
			}
		})
	}
}

// TestJoinIsIdempotentAndSparesCanonicalRows: a second join (a later ingest
// with more files) rebuilds the joined rows from every record and never
// touches rows loaded from canonical logs.
func TestJoinIsIdempotentAndSparesCanonicalRows(t *testing.T) {
	db := openCase(t)
	dir := t.TempDir()
	canon := writeFile(t, filepath.Join(dir, "canon.jsonl"), jsonl(row("c1", "2026-09-01T10:00:00Z", 100)))
	run(t, db, []string{canon}, Options{})
	before := canonicalDump(t, db)

	insertRecords(t, db,
		gatewayRec(2, "chatcmpl-d1", "2026-09-02T08:14:03Z", "team-a", 812004, 377, 200),
		decodeRec(1, "chatcmpl-d1", 5, "glm-d3", "2026-09-02T08:14:03.5Z", 812004, 377))
	if _, err := Join(context.Background(), db, nil, JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	first := joinedDump(t, db)
	if _, err := Join(context.Background(), db, nil, JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	if again := joinedDump(t, db); !slices.Equal(first, again) {
		t.Errorf("second join differs:\n%v\n%v", first, again)
	}
	// The prefill record arrives with a later file: the call is re-joined whole.
	insertRecords(t, db, prefillRec(1, "chatcmpl-p1", 5, "glm-p1", "2026-09-02T08:14:03Z", 1))
	more := filepath.Join(dir, "canon2.jsonl")
	writeFile(t, more, jsonl(row("c2", "2026-09-01T11:00:00Z", 100)))
	res := run(t, db, []string{more}, Options{})
	if res.Join == nil {
		t.Fatal("ingest of a case with source records did not join")
	}
	want := []string{"chatcmpl-d1 team-a glm-5.3 812004 377 200 glm-p1 glm-d3 2026-09-02T08:14:03.500000Z 2026-09-02T08:14:09.500000Z true true"}
	if got := joinedDump(t, db); !slices.Equal(got, want) {
		t.Errorf("after the later ingest:\n got %v\nwant %v", got, want)
	}
	if n := count(t, db, `SELECT count(*) FROM requests WHERE row_id NOT IN (SELECT row_id FROM joined_requests)`); n != 2 {
		t.Errorf("%d canonical rows, want 2", n)
	}
	if !strings.Contains(canonicalDump(t, db), strings.TrimSpace(before)) {
		t.Errorf("canonical rows changed:\n%s", canonicalDump(t, db))
	}
	if s := res.Join.Summary(); s != "join: gateway 1 matched · prefill 1 matched · decode 1 matched -> 1 requests" {
		t.Errorf("summary: %q", s)
	}
}

func TestJoinSummary(t *testing.T) {
	r := &JoinResult{Requests: 4012, Counts: []JoinCount{
		{"gateway", "matched", "by shared id", 4000},
		{"gateway", "unmatched", "no engine record", 12},
		{"decode", "matched", "by shared id", 3990},
		{"decode", "unmatched", "no prefill record", 8},
		{"decode", "ambiguous", "bootstrap_room repeated within 30s", 2},
	}}
	want := "join: gateway 4,000 matched / 12 unmatched (no engine record 12) · decode 3,990 matched / 8 unmatched (no prefill record 8) / 2 ambiguous (bootstrap_room repeated within 30s 2) -> 4,012 requests"
	if got := r.Summary(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
