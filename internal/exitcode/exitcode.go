// Package exitcode is how every tune process ends: the exit codes, the errors that choose them, and the
// one function that prints an error and maps it to its code. It is a leaf (standard library only), so
// that the light `tune score` front end (cmd/tune) and the full command tree (internal/cli) share it.
package exitcode

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes, the same for every command.
const (
	OK         = 0 // success, including "nothing to do"
	Error      = 1 // an error; the message is on stderr
	Usage      = 2 // bad flags or arguments
	Escalation = 3 // the run needs a human (escalation)
)

// FlagError is a usage error: the command prints its usage hint and exits 2.
type FlagError struct{ err error }

func (e *FlagError) Error() string { return e.err.Error() }
func (e *FlagError) Unwrap() error { return e.err }

// FlagErrorf builds a usage error.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{err: fmt.Errorf(format, args...)}
}

// AsFlagError makes err a usage error.
func AsFlagError(err error) error { return &FlagError{err: err} }

// EscalationError ends a command with exit code 3 after it has printed its own output.
type EscalationError struct{ Reason string }

func (e *EscalationError) Error() string { return "escalation: " + e.Reason }

// ErrSilent exits 1 without printing anything more: the command has already said why.
var ErrSilent = errors.New("silent error")

// Print maps an error to the process exit code and prints it. This is the only place that decides
// exit codes.
func Print(err error, stderr io.Writer) int {
	if err == nil {
		return OK
	}
	var flagErr *FlagError
	var esc *EscalationError
	switch {
	case errors.Is(err, ErrSilent):
		return Error
	case errors.As(err, &esc):
		fmt.Fprintln(stderr, "tune:", esc.Error())
		return Escalation
	case errors.As(err, &flagErr):
		fmt.Fprintln(stderr, "tune:", err)
		fmt.Fprintln(stderr, "Run 'tune --help' or 'tune <command> --help' for usage.")
		return Usage
	default:
		fmt.Fprintln(stderr, "tune:", err)
		return Error
	}
}
