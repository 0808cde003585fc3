package ingest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leakmap/leakmap/casedb"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func hwm() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "?"
}

func resetHWM() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

const sel = `request_id, ts, end_ts, tenant_id, model,
	  prompt_tokens::BIGINT, completion_tokens::BIGINT, status::INTEGER, prefill_instance, decode_instance, prompt_text, response_text,
	  hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens::BIGINT, completion_tokens::BIGINT, status::INTEGER, prefill_instance, decode_instance, prompt_text, response_text)`
const cols = `columns={request_id:'VARCHAR',ts:'TIMESTAMPTZ',end_ts:'TIMESTAMPTZ',tenant_id:'VARCHAR',model:'VARCHAR',prompt_tokens:'VARCHAR',completion_tokens:'VARCHAR',status:'VARCHAR',prefill_instance:'VARCHAR',decode_instance:'VARCHAR',prompt_text:'VARCHAR',response_text:'VARCHAR'}, format='newline_delimited'`

func TestScratchQ(t *testing.T) {
	if os.Getenv("SCR") == "" {
		t.Skip()
	}
	os.Remove("/tmp/ingx/s.duckdb")
	db, _ := casedb.Open(context.Background(), "/tmp/ingx/s.duckdb")
	db.SetMaxOpenConns(1)
	tm := func(name, q string, args ...any) {
		resetHWM()
		w, c := time.Now(), cpu()
		var n any
		err := db.QueryRow(q, args...).Scan(&n)
		fmt.Printf("%-12s wall %6s cpu %6s hwm %s -> %v %v\n", name, time.Since(w).Round(time.Millisecond), (cpu() - c).Round(time.Millisecond), hwm(), n, err)
	}
	db.Exec("BEGIN")
	_, err := db.Exec("INSERT INTO requests SELECT (hash(request_id) >> 2)::BIGINT, " + sel + ", 5, 0 FROM read_json('/tmp/ingx/big.jsonl.gz', " + cols + ")")
	fmt.Println("insert", err, hwm())
	for _, q := range []struct{ n, q string }{
		{"conf-narrow", `WITH mine AS MATERIALIZED (SELECT DISTINCT hash(request_id) AS h FROM requests WHERE file_id = $1),
		 shared AS MATERIALIZED (SELECT hash(request_id) AS h FROM requests WHERE hash(request_id) IN (SELECT h FROM mine) GROUP BY 1 HAVING count(*) > 1)
		 SELECT count(*) FROM shared`},
		{"conf-whole", `SELECT count(*) FROM (SELECT hash(request_id) AS h FROM requests GROUP BY 1 HAVING count(*) > 1 AND bool_or(file_id = $1))`},
		{"conf-semi", `SELECT count(*) FROM (SELECT hash(request_id) AS h FROM requests WHERE hash(request_id) IN (SELECT hash(request_id) FROM requests WHERE file_id = $1) GROUP BY 1 HAVING count(*) > 1)`},
		{"dup-narrow", `WITH mine AS MATERIALIZED (SELECT DISTINCT row_hash FROM requests WHERE file_id = $1),
		 shared AS MATERIALIZED (SELECT row_hash FROM requests WHERE row_hash IN (SELECT row_hash FROM mine) GROUP BY row_hash HAVING count(*) > 1)
		 SELECT count(*) FROM shared`},
		{"dup-whole", `SELECT count(*) FROM (SELECT row_hash FROM requests GROUP BY 1 HAVING count(*) > 1 AND bool_or(file_id = $1))`},
		{"both-whole", `SELECT count(*) FROM (SELECT row_hash, hash(request_id) h2 FROM requests GROUP BY GROUPING SETS ((row_hash), (h2)) HAVING count(*) > 1 AND bool_or(file_id = $1))`},
	} {
		tm(q.n, q.q, 5)
	}
}
