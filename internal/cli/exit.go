package cli

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes, the same for every command.
const (
	ExitOK         = 0 // success, including "nothing to do"
	ExitError      = 1 // an error; the message is on stderr
	ExitUsage      = 2 // bad flags or arguments
	ExitEscalation = 3 // the run needs a human (escalation)
)

// FlagError is a usage error: the command prints its usage hint and exits 2.
type FlagError struct{ err error }

func (e *FlagError) Error() string { return e.err.Error() }
func (e *FlagError) Unwrap() error { return e.err }

// FlagErrorf builds a usage error.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{err: fmt.Errorf(format, args...)}
}

// EscalationError ends a command with exit code 3 after it has printed its own output.
type EscalationError struct{ Reason string }

func (e *EscalationError) Error() string { return "escalation: " + e.Reason }

// ErrSilent exits 1 without printing anything more: the command has already said why.
var ErrSilent = errors.New("silent error")

// exitCode maps an error to the process exit code and prints it. This is the only place that decides
// exit codes.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var flagErr *FlagError
	var esc *EscalationError
	switch {
	case errors.Is(err, ErrSilent):
		return ExitError
	case errors.As(err, &esc):
		fmt.Fprintln(stderr, "tune:", esc.Error())
		return ExitEscalation
	case errors.As(err, &flagErr):
		fmt.Fprintln(stderr, "tune:", err)
		fmt.Fprintln(stderr, "Run 'tune --help' or 'tune <command> --help' for usage.")
		return ExitUsage
	default:
		fmt.Fprintln(stderr, "tune:", err)
		return ExitError
	}
}
