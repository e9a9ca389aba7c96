package cli

import (
	"io"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// Exit codes, the same for every command (defined once in internal/exitcode, which the light
// `tune score` front end shares).
const (
	ExitOK         = exitcode.OK
	ExitError      = exitcode.Error
	ExitUsage      = exitcode.Usage
	ExitEscalation = exitcode.Escalation
)

// FlagError is a usage error: the command prints its usage hint and exits 2.
type FlagError = exitcode.FlagError

// EscalationError ends a command with exit code 3 after it has printed its own output.
type EscalationError = exitcode.EscalationError

// ErrSilent exits 1 without printing anything more: the command has already said why.
var ErrSilent = exitcode.ErrSilent

// FlagErrorf builds a usage error.
func FlagErrorf(format string, args ...any) error { return exitcode.FlagErrorf(format, args...) }

// exitCode maps an error to the process exit code and prints it (exitcode.Print).
func exitCode(err error, stderr io.Writer) int { return exitcode.Print(err, stderr) }
