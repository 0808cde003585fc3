// Command leakmap maps a cross-tenant data leak in a shared AI inference
// service and drafts every notice it calls for. Each command lives in its own
// file and is listed in commands below; this file owns the root command,
// logging, and the one mapping from errors to exit codes.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/errs"
	"github.com/spf13/cobra"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	verbose bool
	quiet   bool
	stdout  io.Writer
	stderr  io.Writer
	logger  *slog.Logger
	// ran is set when a command's own RunE starts (see markRuns).
	ran bool
	// memoryLimit is --memory-limit as given ("" : casedb's default).
	memoryLimit string
}

// openCase opens a case database with the engine options the flags set.
func (g *globalOptions) openCase(ctx context.Context, path string) (*sql.DB, error) {
	var opts casedb.Options
	if g.memoryLimit != "" {
		n, err := casedb.ParseSize(g.memoryLimit)
		if err != nil {
			return nil, errs.Usage("--memory-limit: %w", err)
		}
		opts.MemoryLimit = n
	}
	return casedb.OpenWith(ctx, path, opts)
}

// limitGoHeap gives leakmap's own heap the case database's memory limit as
// a soft limit (unless GOMEMLIMIT sets one): Go's collector otherwise lets
// the heap grow to twice its live data, and a large case's notices hold
// millions of identifiers. Beyond the limit the collector works harder; it
// never fails for it; below 512 MiB it would mostly collect, so that is the
// least given. A limit that does not parse is left to openCase to refuse.
func (g *globalOptions) limitGoHeap() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	n := casedb.DefaultMemoryLimit()
	if g.memoryLimit != "" {
		var err error
		if n, err = casedb.ParseSize(g.memoryLimit); err != nil {
			return
		}
	}
	debug.SetMemoryLimit(max(n, 512<<20))
}

// commands builds every command, in the order --help lists them.
var commands = []func(*globalOptions) *cobra.Command{
	newDemoCmd, newRunCmd, newIngestCmd, newAnalyzeCmd, newReportCmd, newNotifyCmd,
	newSimulateCmd, newPreflightCmd, newSweepCmd, newVersionCmd,
}

func newRootCmd(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "leakmap",
		Short: "Forensics and notices for a cross-tenant data leak in a shared AI inference service",
		Long: `leakmap ingests an inference service's request logs into a case database,
finds the requests above the KV-capacity threshold inside the exposure window,
maps which tenants may have received other tenants' data and whose data may
have leaked (with evidence and a confidence tier), and drafts every notice.

Start with 'leakmap demo' to see the whole pipeline on simulated data.

` + errs.ExitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			level := slog.LevelInfo
			switch {
			case g.verbose:
				level = slog.LevelDebug
			case g.quiet:
				level = slog.LevelWarn
			}
			g.logger = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
			g.limitGoHeap()
		},
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log debug detail to stderr")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "log only warnings and errors")
	root.PersistentFlags().StringVar(&g.memoryLimit, "memory-limit", "",
		fmt.Sprintf("memory the case database may use before it spills to disk beside the case, e.g. 2GiB, and the soft limit of leakmap's own heap (default: a quarter of physical memory, at most 3 GiB; here %s)", humanBytes(casedb.DefaultMemoryLimit())))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return errs.Usage("%w (see '%s --help')", err, c.CommandPath())
	})
	for _, build := range commands {
		cmd := build(g)
		// Every command's --help ends with the exit codes.
		cmd.Long = cmd.Long + "\n\n" + errs.ExitCodesHelp
		root.AddCommand(cmd)
	}
	markRuns(root, g)
	return root
}

// markRuns wraps every command's RunE so that execute knows whether the
// command itself ran: an error returned before that comes from cobra's own
// checks (unknown command, arguments, required flags) and is a usage error,
// whatever its wording.
func markRuns(cmd *cobra.Command, g *globalOptions) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			g.ran = true
			return run(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		markRuns(sub, g)
	}
}

// execute runs leakmap with args and returns its exit status; main and the
// end-to-end tests share it.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globalOptions{stdout: stdout, stderr: stderr,
		logger: slog.New(slog.NewTextHandler(stderr, nil))}
	// The heap's limit is the process's: put back for the next run (the
	// end-to-end tests run many in one process).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	root := newRootCmd(g)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		if !g.ran && errs.ExitCode(err) == 1 {
			err = errs.Usage("%w (see '%s --help')", err, cmd.CommandPath())
		}
		fmt.Fprintf(stderr, "leakmap: %v\n", err)
	}
	return errs.ExitCode(err)
}

func main() {
	// Ctrl-C cancels the context: each step stops at a consistent point.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// humanBytes writes a size in binary units for help texts.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", n>>20)
	}
}
