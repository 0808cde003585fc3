// Package queries holds leakmap's SQL, one query per file, embedded as data.
//
// Each file starts with a one-line description comment. A file whose query
// takes positional parameters ($1, $2, ...) declares sample values for the
// fixture test on a line "-- args: <SQL expressions>". Files run in name
// order in the fixture test, so a file may read a temporary table that an
// earlier file (by name) creates.
package queries

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Get returns the SQL of queries/<name>.sql. A missing file is a programming
// error: the set of files is fixed at build time, and a test runs them all.
func Get(name string) string {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		panic(fmt.Sprintf("queries: no query %q", name))
	}
	return string(b)
}

// Names lists every query (file name without .sql), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".sql"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Description returns the first comment line of a query.
func Description(name string) string {
	first, _, _ := strings.Cut(Get(name), "\n")
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(first), "--"))
}

// TestArgs returns the "-- args:" expressions of a query, or "".
func TestArgs(name string) string {
	for _, line := range strings.Split(Get(name), "\n") {
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "-- args:"); ok {
			return strings.TrimSpace(a)
		}
	}
	return ""
}
