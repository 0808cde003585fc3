// Command benchingest is the Go half of scripts/bench-ingest: it writes the
// clean canonical JSONL.gz the benchmark loads ("gen"), and runs DuckDB's bare
// reader on it through the same driver leakmap uses ("bare"), since the
// machine has no duckdb CLI.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/klauspost/compress/gzip"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: benchingest gen OUT.jsonl.gz ROWS [z|mixed] | bare DB.duckdb LOG")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		n := 5_000_000
		if len(os.Args) > 3 {
			n, err = strconv.Atoi(os.Args[3])
		}
		mixed := len(os.Args) <= 4 || os.Args[4] != "z"
		if err == nil {
			err = gen(os.Args[2], n, mixed)
		}
	case "bare":
		err = bare(os.Args[2], os.Args[3])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchingest:", err)
		os.Exit(1)
	}
}

// gen writes n clean canonical rows: every field of the schema. mixed:
// times with mixed offsets and text on one row in five, as a simulated
// service would log; else every time in UTC with Z and no text (the
// easiest file for either reader).
func gen(path string, n int, mixed bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.DefaultCompression)
	w := bufio.NewWriterSize(zw, 1<<20)
	base := time.Date(2026, 8, 27, 0, 0, 0, 0, time.UTC)
	zones := []*time.Location{time.UTC, time.FixedZone("", 2*3600), time.FixedZone("", -5*3600)}
	if !mixed {
		zones = []*time.Location{time.UTC}
	}
	var b []byte
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(i) * 250 * time.Millisecond).In(zones[i%len(zones)])
		end := ts.Add(time.Duration(500+i%7000) * time.Millisecond)
		b = b[:0]
		b = append(b, `{"request_id":"req-`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","ts":"`...)
		b = ts.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","end_ts":"`...)
		b = end.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","tenant_id":"tenant-`...)
		b = strconv.AppendInt(b, int64(i*7919%500), 10)
		b = append(b, `","model":"glm-5.3","prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(100+i*104729%900000), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(1+i%2000), 10)
		b = append(b, `,"status":200,"prefill_instance":"prefill-`...)
		b = strconv.AppendInt(b, int64(i%8), 10)
		b = append(b, `","decode_instance":"decode-`...)
		b = strconv.AppendInt(b, int64(i%4), 10)
		b = append(b, '"')
		if mixed && i%5 == 0 {
			b = append(b, `,"prompt_text":"summarise the quarterly figures for account `...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `","response_text":"the figures show a steady rise in usage"`...)
		}
		b = append(b, "}\n"...)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// canonicalColumns are the canonical schema's columns with their types, as
// casedb/schema.sql declares them: the fastest read DuckDB can do is one
// that detects nothing.
const canonicalColumns = `{request_id: 'VARCHAR', ts: 'TIMESTAMPTZ', end_ts: 'TIMESTAMPTZ',
	tenant_id: 'VARCHAR', model: 'VARCHAR', prompt_tokens: 'BIGINT', completion_tokens: 'BIGINT',
	status: 'INTEGER', prefill_instance: 'VARCHAR', decode_instance: 'VARCHAR',
	prompt_text: 'VARCHAR', response_text: 'VARCHAR'}`

// bare is the yardstick: DuckDB's reader given the schema's explicit column
// types (no detection), into a file database, nothing else.
func bare(dbPath, log string) error {
	ctx := context.Background()
	c, err := duckdb.NewConnector(dbPath, nil)
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	start := time.Now()
	q := "CREATE TABLE t AS SELECT * FROM read_json(?, format = 'newline_delimited', columns = " + canonicalColumns + ")"
	if _, err := db.ExecContext(ctx, q, log); err != nil {
		return err
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bare: %d rows in %s\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}
