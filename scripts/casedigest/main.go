// Command casedigest prints, for each table of a case database that the
// ingest and the join write, its row count and an MD5 over its rows in key
// order: two cases built from the same logs by two builds of leakmap hold
// the same rows exactly when every line matches (docs/performance.md uses
// it before and after a change to the ingest).
//
// Usage: go run -tags duckdb_arrow ./scripts/casedigest CASE.duckdb
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/duckdb/duckdb-go/v2"
)

// tables: each with the columns that order its rows (every column is hashed).
var tables = []struct{ name, order string }{
	{"requests", "request_id, row_id"},
	{"source_records", "record_id"},
	{"rejected_rows", "file_id, line, reason"},
	{"joined_requests", "row_id"},
	{"request_sources", "row_id, record_id, role"},
	{"join_report", "ALL"},
	{"ingest_files", "file_id"},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: casedigest CASE.duckdb")
		os.Exit(2)
	}
	db, err := sql.Open("duckdb", os.Args[1]+"?access_mode=read_only")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	for _, t := range tables {
		var n int64
		var sum sql.NullString
		// ingest_files names where and when a file was loaded: only what
		// was read from it is compared.
		sel := "*"
		if t.name == "ingest_files" {
			sel = "* EXCLUDE (loaded_at)"
		}
		q := fmt.Sprintf("SELECT count(*), md5(string_agg(md5(CAST(t AS VARCHAR)), '' ORDER BY %s)) FROM (SELECT %s FROM %s) t", t.order, sel, t.name)
		if t.order == "ALL" {
			q = fmt.Sprintf("SELECT count(*), md5(string_agg(md5(CAST(t AS VARCHAR)), '' ORDER BY CAST(t AS VARCHAR))) FROM %s t", t.name)
		}
		if err := db.QueryRow(q).Scan(&n, &sum); err != nil {
			fmt.Printf("%-16s error: %v\n", t.name, err)
			continue
		}
		fmt.Printf("%-16s %10d rows  %s\n", t.name, n, sum.String)
	}
}
