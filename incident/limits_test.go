package incident

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leakmap/leakmap/errs"
)

// aliasBomb is nine levels of nine aliases each, inside one key the
// incident file knows: 9^9 (387 million) values once expanded, from 700
// bytes.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(validYAML)
	b.WriteString("notices:\n  measures_planned: [&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, ", &l%d [", i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]")
	}
	b.WriteString("]\n")
	return b.String()
}

// TestHostileYAMLFailsFastInBoundedMemory loads hostile incident files in a
// child process capped at 4 GiB of address space and 20 s (before the
// bounds, the bomb took 4 GB and 26 s, the endless timeline 24 GB): an
// alias bomb, nesting 200,000 deep, and a timeline that never ends
// (/dev/zero). Each must fail with exit 2 (a usage error) naming the
// problem, with the child's peak RSS (its rusage) under 150 MB.
func TestHostileYAMLFailsFastInBoundedMemory(t *testing.T) {
	if path := os.Getenv("LEAKMAP_HOSTILE_INCIDENT"); path != "" {
		_, err := Load(path)
		fmt.Printf("exit=%d err=%v\n", errs.ExitCode(err), err)
		return
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	deep := strings.Replace(validYAML, "title: Cross-tenant data in glm-5.3 responses",
		"title: "+strings.Repeat("[", 200_000)+strings.Repeat("]", 200_000), 1)
	deepBlock := validYAML + "notices:\n" + func() string {
		var b strings.Builder
		for i := 1; i < 2000; i++ {
			fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
		}
		return b.String()
	}()
	for _, c := range []struct{ name, yaml, want string }{
		{"alias bomb", aliasBomb(), "alias"},
		{"deep flow", deep, "nested"},
		{"deep block", deepBlock, "nested"},
		{"endless timeline", strings.Replace(validYAML, "timeline: capacity.csv", "timeline: /dev/zero", 1), "size limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeCase(t, c.yaml)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -v 4194304 && exec "$0" -test.run '^TestHostileYAMLFailsFastInBoundedMemory$'`, os.Args[0])
			cmd.Env = append(os.Environ(), "LEAKMAP_HOSTILE_INCIDENT="+path)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("child failed after %s: %v\n%s", took, err, out)
			}
			if !strings.Contains(string(out), "exit=2 ") || !strings.Contains(string(out), c.want) {
				t.Fatalf("child said (after %s):\n%s\nwant exit=2 and %q", took, out, c.want)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
			t.Logf("refused in %s, peak RSS %d MB", took.Round(time.Millisecond), rss>>10)
			if rss > 150<<10 {
				t.Errorf("peak RSS %d MB, want under 150 MB", rss>>10)
			}
		})
	}
}
