package ingest

import (
	"context"
	"fmt"
	"os"
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

const sel = `request_id, ts, end_ts, tenant_id, model,
	  prompt_tokens::BIGINT, completion_tokens::BIGINT, status::INTEGER, prefill_instance, decode_instance, prompt_text, response_text,
	  hash(request_id, ts, end_ts, tenant_id, model, prompt_tokens::BIGINT, completion_tokens::BIGINT, status::INTEGER, prefill_instance, decode_instance, prompt_text, response_text)`
const cols = `columns={request_id:'VARCHAR',ts:'TIMESTAMPTZ',end_ts:'TIMESTAMPTZ',tenant_id:'VARCHAR',model:'VARCHAR',prompt_tokens:'VARCHAR',completion_tokens:'VARCHAR',status:'VARCHAR',prefill_instance:'VARCHAR',decode_instance:'VARCHAR',prompt_text:'VARCHAR',response_text:'VARCHAR'}, format='newline_delimited'`

func TestScratchUpd(t *testing.T) {
	if os.Getenv("SCR") == "" {
		t.Skip()
	}
	step := func(name string, f func() error) {
		w, c := time.Now(), cpu()
		err := f()
		fmt.Printf("%-30s wall %6s cpu %6s err %v\n", name, time.Since(w).Round(time.Millisecond), (cpu() - c).Round(time.Millisecond), err)
	}
	for _, variant := range []string{"two", "one", "bare"} {
		os.Remove("/tmp/ingx/u.duckdb")
		os.Remove("/tmp/ingx/u.duckdb.wal")
		db, _ := casedb.Open(context.Background(), "/tmp/ingx/u.duckdb")
		db.SetMaxOpenConns(1)
		if variant == "bare" {
			step("bare", func() error {
				_, err := db.Exec("CREATE TABLE t AS SELECT * FROM read_json('/tmp/ingx/big.jsonl.gz')")
				return err
			})
			db.Close()
			continue
		}
		db.Exec("CREATE TEMP SEQUENCE s")
		db.Exec("BEGIN")
		rowid := "0"
		if variant == "one" {
			rowid = "(5::BIGINT << 32) + nextval('s')"
		}
		step(variant+" insert", func() error {
			_, err := db.Exec("INSERT INTO requests SELECT " + rowid + ", " + sel + ", 5, 0 FROM read_json('/tmp/ingx/big.jsonl.gz', " + cols + ")")
			return err
		})
		upd := "UPDATE requests SET line = rowid - 36028797018960000 + 1, row_id = rowid WHERE file_id = 5"
		if variant == "one" {
			upd = "UPDATE requests SET line = rowid - 36028797018960000 + 1 WHERE file_id = 5"
		}
		step(variant+" update", func() error { _, err := db.Exec(upd); return err })
		step(variant+" commit", func() error { _, err := db.Exec("COMMIT"); return err })
		db.Close()
	}
}

func TestScratchWhich(t *testing.T) {
	m, _ := presetMapping("canonical")
	for _, l := range []string{
		`{"request_id":"v2","ts":"2026-09-01 10:00:00","tenant_id":"t","model":"m","prompt_tokens":"12","completion_tokens":"0","status":"200"}`,
		`{"request_id":"v3","ts":"2026-09-01T12:00:00.123456789+02:00","end_ts":"2026-09-01T10:00:01Z","tenant_id":"t","model":"m","prompt_tokens":5,"decode_instance":""}`,
		`{"request_id":"v4","ts":"2026-09-01","tenant_id":"t\u00e9 \"q\" \\ \n","model":"m","prompt_tokens":5,"prompt_text":"日本語 ✓","response_text":"","extra":{"x":[1,2]}}`,
		`{"request_id":"v5","ts":"2026-09-01T10:00:00-00:30","tenant_id":"t","model":"m","prompt_tokens":0,"status":null,"end_ts":null}`,
		`{"ts":"2026-09-01T10:00:00Z","request_id":"v6","model":"m","tenant_id":"t","prompt_tokens":9007199254740993}`,
	} {
		_, err := parseLine([]byte(l), m, fileInstance{})
		fmt.Println(err)
	}
}
