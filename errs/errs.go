// Package errs holds the error kinds that decide leakmap's exit status.
// Library packages wrap these sentinels with %w; only cmd/leakmap maps them
// to exit codes, in one place.
package errs

import (
	"errors"
	"fmt"
)

var (
	// ErrUsage: a bad flag, a bad incident file or a bad tenant directory (exit 2).
	ErrUsage = errors.New("usage")
	// ErrInput: input data that stops a step (exit 3).
	ErrInput = errors.New("bad input")
	// ErrBlocked: a notice blocked by the isolation check (exit 4).
	ErrBlocked = errors.New("blocked")
	// ErrFinding: preflight found a KV pool smaller than the context its
	// server accepts (exit 5). It wins over ErrInput: a deploy pipeline must
	// stop a bad launch even when some other line could not be read.
	ErrFinding = errors.New("finding")
)

// Usage wraps a message as a usage/configuration error.
func Usage(format string, a ...any) error {
	return &kindError{kind: ErrUsage, err: fmt.Errorf(format, a...)}
}

// Input wraps a message as an input-data error.
func Input(format string, a ...any) error {
	return &kindError{kind: ErrInput, err: fmt.Errorf(format, a...)}
}

// Blocked wraps a message as an isolation-check block.
func Blocked(format string, a ...any) error {
	return &kindError{kind: ErrBlocked, err: fmt.Errorf(format, a...)}
}

// Finding wraps a message as a preflight finding.
func Finding(format string, a ...any) error {
	return &kindError{kind: ErrFinding, err: fmt.Errorf(format, a...)}
}

// kindError keeps the message free of a "usage:" prefix while still
// matching errors.Is(err, ErrUsage).
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// ExitCode maps any error to leakmap's exit status.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	case errors.Is(err, ErrFinding):
		return 5
	case errors.Is(err, ErrInput):
		return 3
	case errors.Is(err, ErrBlocked):
		return 4
	default:
		return 1
	}
}

// ExitCodesHelp is printed by --help.
const ExitCodesHelp = `Exit status:
  0  success
  1  anything else (I/O, database, SMTP failure)
  2  usage error, or a bad incident or tenant file
  3  input data that stops a step (e.g. a file that is not a log)
  4  a notice blocked by the isolation check
  5  preflight found a KV pool smaller than the context its server accepts`
