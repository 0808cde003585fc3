package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// cliCase is one command line and what it must print and exit with; its
// golden file is testdata/cli/NAME.golden.
type cliCase struct {
	name string
	args []string
}

// TestCLI runs each command line in-process and compares the exit status,
// stdout and stderr with the golden file (regenerate with
// `go test ./cmd/leakmap -run TestCLI -update` and read the diff). Every
// command's --help is a case of its own, so a new command or flag shows up
// in review.
func TestCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	example := filepath.Join("..", "..", "docs", "example")
	cases := []cliCase{
		{"usage-unknown-command", []string{"no-such-command"}},
		{"usage-unknown-flag", []string{"run", "--no-such-flag"}},
		{"usage-missing-required", []string{"analyze"}},
		{"usage-extra-argument", []string{"analyze", "--db", "x", "--incident", "y", "--out", "z", "extra"}},
		{"usage-bad-memory-limit", []string{"--memory-limit", "lots", "analyze", "--db", filepath.Join(out, "m.duckdb"), "--incident", filepath.Join(example, "incident.yaml"), "--out", out}},
		{"incident-missing", []string{"run", "--incident", filepath.Join(example, "none.yaml"), "--tenants", filepath.Join(example, "tenants.csv"), "--out", out, filepath.Join(example, "logs")}},
		{"input-missing-log", []string{"-q", "ingest", "--db", filepath.Join(out, "missing.duckdb"), filepath.Join(example, "no-such.jsonl")}},
		{"example-run", []string{"-q", "run", "--incident", filepath.Join(example, "incident.yaml"), "--tenants", filepath.Join(example, "tenants.csv"), "--out", filepath.Join(out, "example"), filepath.Join(example, "logs")}},
		{"run-wording-one-language", []string{"-q", "run", "--incident", englishOnlyIncident(t, example, out), "--tenants", filepath.Join(example, "tenants.csv"), "--out", filepath.Join(out, "wording"), filepath.Join(example, "logs")}},
		{"run-bad-directory-address", []string{"-q", "run", "--incident", filepath.Join(example, "incident.yaml"), "--tenants", badAddressDirectory(t, example, out), "--out", filepath.Join(out, "bad-address"), filepath.Join(example, "logs")}},
	}
	// What a case must leave on disk, beyond its output.
	after := map[string]func(t *testing.T){
		"run-bad-directory-address": func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(out, "bad-address")); !os.IsNotExist(err) {
				t.Errorf("a run refused for its directory left its output folder (%v)", err)
			}
		},
		// Refused before any work: not even the output folder is made.
		"run-wording-one-language": func(t *testing.T) {
			if entries, err := os.ReadDir(filepath.Join(out, "wording")); !os.IsNotExist(err) {
				t.Errorf("a run refused for its wording left its output folder (%v): %d entries", err, len(entries))
			}
		},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		name := "help"
		if len(path) > 0 {
			name += "-" + strings.Join(path, "-")
		}
		cases = append(cases, cliCase{name, append(path, "--help")})
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(newRootCmd(&globalOptions{}))

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			got := fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout, stderr)
			got = scrub(got, out)
			golden := filepath.Join("testdata", "cli", c.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (regenerate: go test ./cmd/leakmap -run TestCLI -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("leakmap %s: output differs from %s (-want +got; regenerate with -update and read the diff):\n%s",
					strings.Join(c.args, " "), golden, diff)
			}
			if check := after[c.name]; check != nil {
				check(t)
			}
		})
	}
}

// englishOnlyIncident is the example's incident file with custom wording in
// English only, where the example has a French tenant and a French
// regulator notice; it is written into dir (the golden names it $OUT).
func englishOnlyIncident(t *testing.T, example, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(example, "incident.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "notices:\n  en:\n    consequences: Parts of prompts may have reached another customer.\n    measures_planned: [check the pool at every start]\n"...)
	p := filepath.Join(dir, "incident-en-only.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// badAddressDirectory is the example's tenant directory with one address
// that does not parse beside a good one: the directory is refused (exit 2).
func badAddressDirectory(t *testing.T, example, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(example, "tenants.csv"))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "dpo@globex.example;", "dpo at globex.example;", 1))
	p := filepath.Join(dir, "tenants-bad-address.csv")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// What varies between runs: the temporary folder, timings and the
// machine's own memory size in the --memory-limit help.
var scrubbers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d+(\.\d+)?s \(\d+ requests/s\)`), "T (R requests/s)"},
	{regexp.MustCompile(`analysis time: \d+(\.\d+)?s`), "analysis time: T"},
	{regexp.MustCompile(`here \d+(\.\d+)? (GiB|MiB)\)`), "here M)"},
}

func scrub(s, tmp string) string {
	s = strings.ReplaceAll(s, tmp, "$OUT")
	for _, r := range scrubbers {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}
