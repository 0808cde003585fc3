// Command leakmap maps a cross-tenant data leak in a shared AI inference
// service and drafts every notice it calls for. Each command lives in its own
// file and registers itself with register; this file owns the root command,
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
	"strings"
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

// commandBuilders is filled by each command file's init.
var commandBuilders []func(*globalOptions) *cobra.Command

func register(build func(*globalOptions) *cobra.Command) {
	commandBuilders = append(commandBuilders, build)
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
		},
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log debug detail to stderr")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "log only warnings and errors")
	root.PersistentFlags().StringVar(&g.memoryLimit, "memory-limit", "",
		fmt.Sprintf("memory the case database may use before it spills to disk beside the case, e.g. 2GiB (default: a quarter of physical memory, at most 3 GiB; here %s)", humanBytes(casedb.DefaultMemoryLimit())))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return errs.Usage("%w (see '%s --help')", err, c.CommandPath())
	})
	for _, build := range commandBuilders {
		cmd := build(g)
		// Every command's --help ends with the exit codes.
		cmd.Long = cmd.Long + "\n\n" + errs.ExitCodesHelp
		root.AddCommand(cmd)
	}
	return root
}

// execute runs leakmap with args and returns its exit status; main and the
// end-to-end tests share it.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globalOptions{stdout: stdout, stderr: stderr,
		logger: slog.New(slog.NewTextHandler(stderr, nil))}
	root := newRootCmd(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		if isCobraUsageError(err) {
			err = errs.Usage("%w", err)
		}
		fmt.Fprintf(stderr, "leakmap: %v\n", err)
	}
	return errs.ExitCode(err)
}

// isCobraUsageError recognises cobra's own argument errors (unknown command,
// wrong number of args), which it returns as plain errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "required flag", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
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
