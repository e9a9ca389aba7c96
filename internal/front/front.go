// Package front is the light `tune` binary (cmd/tune): it runs `tune score` and the JSON of named trace
// logs (`tune trace --format json|jsonl LOG...`) itself and hands every other command to the full
// binary, tune-full, installed next to it.
//
// Agents call `tune score` once per task, so its process start is what users pay most often. A Go
// process runs the initialisation of every package it links before main, and the full command tree
// links gonum/plot (which parses its bundled fonts at init) and the table library: together several
// times the cost of scoring a prompt. This binary links only the scoring path
// (docs/decisions.md#score-start-up); the exec that reaches tune-full costs about a millisecond on the
// other commands, which all take tens of milliseconds or more. A whole trace log streamed as JSON is
// the other command whose time is mostly start-up once the reader is fast: on an 8 MB log tune-full's
// initialisation was about a sixth of the process (docs/decisions.md#streaming-reads).
package front

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/clock"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/scorecmd"
	"github.com/ldd-tools/tune/internal/tracecmd"
)

// FullName is the file name of the full binary, looked up next to this one and then on PATH.
const FullName = "tune-full"

// globalValueFlags are the root's flags that take a value (as a separate argument unless given as
// --flag=value); Wants skips their values while it looks for the command name.
var globalValueFlags = map[string]bool{"--weights-dir": true, "--fixtures-dir": true, "--reports-dir": true}

// Wants returns the command of args (without the program name) that this binary runs itself, or "":
// the first argument that is neither a global flag nor its value, when it is "score" or "trace" (which
// runs here only for JSON of named logs, see Trace). Help, version and completion requests go to the
// full binary, which knows every command, and so does a trace with a help flag.
func Wants(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case globalValueFlags[a]:
			i++ // its value
		case len(a) > 2 && a[:2] == "--" && globalValueFlags[a[:indexByte(a, '=')]]:
		case len(a) > 0 && a[0] == '-':
			return "" // -h, --help, --version or a flag the light root does not know
		case (a == "score" || a == "trace") && filtersJSON(args[i+1:]):
			return "" // --jq and --template are tune-full's (gojq is not linked here)
		case a == "score":
			if asksHelp(args[i+1:]) {
				return "" // help is wrapped to the terminal by tune-full
			}
			return a
		case a == "trace":
			for _, rest := range args[i+1:] {
				if rest == "-h" || rest == "--help" || rest == "--" {
					return ""
				}
			}
			return a
		default:
			return ""
		}
	}
	return ""
}

// asksHelp reports whether args hold -h or --help before any "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// filtersJSON reports whether args ask for --jq or --template (internal/cmdutil/jsonfilter).
func filtersJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		switch a[:indexByte(a, '=')] {
		case "--jq", "--template":
			return true
		}
	}
	return false
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

// Score runs `tune score` as the full tree would, with the same flags, help, errors and exit codes;
// it returns the exit code.
func Score(args []string, in io.Reader, out, errOut io.Writer, getenv func(string) string) int {
	now, err := clock.FromEnv(getenv)
	if err != nil {
		return exitcode.Print(exitcode.FlagErrorf("%v", err), errOut)
	}
	root, dirs := lightRoot(in, out, errOut, getenv)
	root.AddCommand(scorecmd.NewCmd(&scorecmd.Env{In: in, Out: out, ErrOut: errOut, Now: now, Getenv: getenv, WeightsDir: &dirs.weights, Quiet: &dirs.quiet}, nil))
	return execute(root, args, errOut)
}

// errFull says that a command line is the full binary's after all.
var errFull = errors.New("for tune-full")

// Trace runs `tune trace --format json|jsonl LOG...` (or --json) as the full tree would, and reports
// false, having written nothing, for any other trace (the text table, Parquet, the default log): those
// are tune-full's. A stream of JSON is what pipelines run on whole logs, where tune-full's start-up
// was a sixth of the time (docs/decisions.md#streaming-reads).
func Trace(args []string, in io.Reader, out, errOut io.Writer, getenv func(string) string) (int, bool) {
	if _, err := clock.FromEnv(getenv); err != nil { // the full tree refuses a bad TUNE_NOW for any command
		return 0, false
	}
	root, _ := lightRoot(in, out, errOut, getenv)
	root.AddCommand(tracecmd.NewCmd(&tracecmd.Env{Out: &out, ErrOut: &errOut}, func(opts *tracecmd.Options) error {
		if !tracecmd.Streams(opts) || len(opts.Logs) == 0 {
			return errFull
		}
		return tracecmd.RunJSON(opts)
	}))
	cmdutil.TypeUsageErrors(root)
	root.SetArgs(args)
	_, err := root.ExecuteC()
	if errors.Is(err, errFull) {
		return 0, false
	}
	return exitcode.Print(err, errOut), true
}

// dirs are the light root's global flags.
type dirs struct {
	weights, fixtures, reports string
	wide, quiet                bool
}

// lightRoot is the root of the full tree without its commands: the same global flags, project
// resolution, usage-error typing and error printing.
func lightRoot(in io.Reader, out, errOut io.Writer, getenv func(string) string) (*cobra.Command, *dirs) {
	envOr := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	d := &dirs{}
	root := &cobra.Command{Use: "tune <command>", SilenceErrors: true, SilenceUsage: true}
	// Completion requests go to tune-full (see Wants); building cobra's completion commands here, on
	// every run, was a few percent of `tune score`'s process (docs/decisions.md#score-start-up).
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(cmdutil.FlagError)
	root.PersistentFlags().StringVar(&d.weights, "weights-dir", envOr("TUNE_WEIGHTS_DIR", "weights"), "weights store `directory` (env TUNE_WEIGHTS_DIR)")
	root.PersistentFlags().StringVar(&d.fixtures, "fixtures-dir", envOr("TUNE_FIXTURES_DIR", "fixtures"), "fixture suite `directory` (env TUNE_FIXTURES_DIR)")
	root.PersistentFlags().StringVar(&d.reports, "reports-dir", envOr("TUNE_REPORTS_DIR", "reports"), "report output `directory` (env TUNE_REPORTS_DIR)")
	// Neither score nor JSON prints a table; --wide is declared so that a command line parses as in the
	// full tree.
	cmdutil.AddOutputFlags(root, &d.wide, &d.quiet)
	// The project above the working directory chooses the weights store, as in the full tree.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		_, _, err = project.Resolve(wd, cmd.Flags().Changed, getenv,
			project.Dir{Flag: "weights-dir", Env: "TUNE_WEIGHTS_DIR", Sub: "weights", Value: &d.weights},
			project.Dir{Flag: "fixtures-dir", Env: "TUNE_FIXTURES_DIR", Sub: "fixtures", Value: &d.fixtures},
			project.Dir{Flag: "reports-dir", Env: "TUNE_REPORTS_DIR", Sub: "reports", Value: &d.reports})
		return err
	}
	return root, d
}

func execute(root *cobra.Command, args []string, errOut io.Writer) int {
	cmdutil.TypeUsageErrors(root)
	root.SetArgs(args)
	_, err := root.ExecuteC()
	return exitcode.Print(err, errOut)
}

// FindFull returns the path of the full binary: next to self (the running binary), else on PATH.
func FindFull(self string) (string, error) {
	if self != "" {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		p := filepath.Join(filepath.Dir(self), FullName+exeSuffix())
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(FullName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found next to %s or on PATH: every command but `tune score` runs in it; install both with `make build` (bin/) or `go install github.com/ldd-tools/tune/cmd/...`", FullName, self)
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// Exec replaces this process with the full binary, giving it args (without the program name). It
// returns only on failure, with the exit code to end with; where exec is not available it runs the
// full binary as a child and ends with its exit code.
func Exec(args []string, errOut io.Writer) int {
	self, _ := os.Executable()
	full, err := FindFull(self)
	if err != nil {
		return exitcode.Print(err, errOut)
	}
	argv := append([]string{"tune"}, args...)
	if runtime.GOOS != "windows" {
		err = syscall.Exec(full, argv, os.Environ())
		return exitcode.Print(fmt.Errorf("running %s: %w", full, err), errOut)
	}
	cmd := exec.Command(full, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var exitErr *exec.ExitError
	if err = cmd.Run(); errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	if err != nil {
		return exitcode.Print(fmt.Errorf("running %s: %w", full, err), errOut)
	}
	return exitcode.OK
}
