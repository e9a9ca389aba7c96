// Package front is the light `tune` binary (cmd/tune): it runs `tune score` itself and hands every other
// command to the full binary, tune-full, installed next to it.
//
// Agents call `tune score` once per task, so its process start is what users pay most often. A Go
// process runs the initialisation of every package it links before main, and the full command tree
// links gonum/plot (which parses its bundled fonts at init) and the table library: together several
// times the cost of scoring a prompt. This binary links only the scoring path
// (docs/decisions.md#score-start-up); the exec that reaches tune-full costs about a millisecond on the
// other commands, which all take tens of milliseconds or more.
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
)

// FullName is the file name of the full binary, looked up next to this one and then on PATH.
const FullName = "tune-full"

// globalValueFlags are the root's flags that take a value (as a separate argument unless given as
// --flag=value); Wants skips their values while it looks for the command name.
var globalValueFlags = map[string]bool{"--weights-dir": true, "--fixtures-dir": true, "--reports-dir": true}

// Wants reports whether args (without the program name) run `tune score`: the first argument that is
// neither a global flag nor its value is "score". Help, version and completion requests go to the
// full binary, which knows every command.
func Wants(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case globalValueFlags[a]:
			i++ // its value
		case len(a) > 2 && a[:2] == "--" && globalValueFlags[a[:indexByte(a, '=')]]:
		case len(a) > 0 && a[0] == '-':
			return false // -h, --help, --version or a flag the light root does not know
		default:
			return a == "score"
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

// Score runs `tune score` with args (which Wants accepted) and returns the exit code. Its root carries
// the same global flags as the full tree's, so a command line parses the same in both.
func Score(args []string, in io.Reader, out, errOut io.Writer, getenv func(string) string) int {
	now, err := clock.FromEnv(getenv)
	if err != nil {
		return exitcode.Print(exitcode.FlagErrorf("%v", err), errOut)
	}
	envOr := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	var weightsDir, fixturesDir, reportsDir string
	root := &cobra.Command{Use: "tune <command>", SilenceErrors: true, SilenceUsage: true}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitcode.AsFlagError(err) })
	root.PersistentFlags().StringVar(&weightsDir, "weights-dir", envOr("TUNE_WEIGHTS_DIR", "weights"), "weights store `directory` (env TUNE_WEIGHTS_DIR)")
	root.PersistentFlags().StringVar(&fixturesDir, "fixtures-dir", envOr("TUNE_FIXTURES_DIR", "fixtures"), "fixture suite `directory` (env TUNE_FIXTURES_DIR)")
	root.PersistentFlags().StringVar(&reportsDir, "reports-dir", envOr("TUNE_REPORTS_DIR", "reports"), "report output `directory` (env TUNE_REPORTS_DIR)")
	var wide, quiet bool // score prints no table; --wide is declared so that a command line parses as in the full tree
	cmdutil.AddOutputFlags(root, &wide, &quiet)
	// The project above the working directory chooses the weights store, as in the full tree.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		_, _, err = project.Resolve(wd, cmd.Flags().Changed, getenv,
			project.Dir{Flag: "weights-dir", Env: "TUNE_WEIGHTS_DIR", Sub: "weights", Value: &weightsDir},
			project.Dir{Flag: "fixtures-dir", Env: "TUNE_FIXTURES_DIR", Sub: "fixtures", Value: &fixturesDir},
			project.Dir{Flag: "reports-dir", Env: "TUNE_REPORTS_DIR", Sub: "reports", Value: &reportsDir})
		return err
	}
	root.AddCommand(scorecmd.NewCmd(&scorecmd.Env{In: in, Out: out, ErrOut: errOut, Now: now, Getenv: getenv, WeightsDir: &weightsDir, Quiet: &quiet}, nil))
	cmdutil.TypeUsageErrors(root)
	root.SetArgs(args)
	_, err = root.ExecuteC()
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
