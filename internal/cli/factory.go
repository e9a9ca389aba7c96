package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/clock"
	"github.com/ldd-tools/tune/internal/iostreams"
	"github.com/ldd-tools/tune/internal/project"
)

// IOStreams are the streams a command reads and writes (internal/iostreams). Tests replace them with buffers.
type IOStreams = iostreams.IOStreams

// Factory hands each command its dependencies, so that tests can substitute any of them.
type Factory struct {
	IO *IOStreams
	// Now is the clock. TUNE_NOW (RFC 3339) fixes it, which keeps reports and stored versions reproducible.
	Now func() time.Time
	// Getenv reads the environment.
	Getenv func(string) string
	// WeightsDir is the weights store directory (--weights-dir, TUNE_WEIGHTS_DIR, default "weights").
	WeightsDir string
	// FixturesDir is the fixture suite directory (--fixtures-dir, TUNE_FIXTURES_DIR, default "fixtures").
	FixturesDir string
	// ReportsDir is where reports are written (--reports-dir, TUNE_REPORTS_DIR, default "reports").
	ReportsDir string
	// ProjectRoot is the nearest directory above the working directory holding tune.toml ("" when
	// none); the three directories default to its weights/, fixtures/ and reports/.
	ProjectRoot string
	// Builtin: no flag, variable or project chose the weights and fixtures directories (see app.Env).
	Builtin bool
	// Quiet (--quiet) drops the notes on stderr; warnings and errors stay.
	Quiet bool
}

// resolveProject finds the project above the working directory and points every directory no flag or
// environment variable chose at it (docs/decisions.md#project-discovery).
func (f *Factory) resolveProject(flags *pflag.FlagSet) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	f.ProjectRoot, f.Builtin, err = project.Resolve(wd, flags.Changed, f.Getenv,
		project.Dir{Flag: "weights-dir", Env: "TUNE_WEIGHTS_DIR", Sub: "weights", Value: &f.WeightsDir},
		project.Dir{Flag: "fixtures-dir", Env: "TUNE_FIXTURES_DIR", Sub: "fixtures", Value: &f.FixturesDir},
		project.Dir{Flag: "reports-dir", Env: "TUNE_REPORTS_DIR", Sub: "reports", Value: &f.ReportsDir})
	return err
}

// note prints "tune: note: …" on stderr unless --quiet.
func (f *Factory) note(format string, a ...any) {
	fmt.Fprintf(f.noteOut(), "tune: note: "+format+"\n", a...)
}

// noteOut is where notes go: stderr, or nowhere with --quiet (warnings and errors always go to stderr).
func (f *Factory) noteOut() io.Writer {
	if f.Quiet {
		return io.Discard
	}
	return f.IO.ErrOut
}

// traceLogs returns the LOG arguments or, without any, the nearest .ldd/trace.log at or above the
// working directory, and says on stderr which one is read.
func (f *Factory) traceLogs(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	p, here, stray, err := project.DefaultTraceLog(wd, f.ProjectRoot)
	if err != nil {
		return nil, err
	}
	for _, s := range stray {
		fmt.Fprintf(f.IO.ErrOut, "tune: warning: %s is a stray trace log below the project root (a hook run from a subdirectory?); reading the project's %s, not it: append its tasks there and remove it\n", s, p)
	}
	if !here {
		f.note("reading the trace log %s", p)
	}
	return []string{p}, nil
}

// logsRunE is the RunE of a command that reads trace logs and has no flag to check: it takes the
// environment and the LOG arguments, and runs (runOnLogs).
func logsRunE[T any](f *Factory, opts *T, env *app.Env, logs *[]string, runF, run func(*T) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		*env, *logs = f.Env(), args
		return runOnLogs(f, opts, logs, runF, run)
	}
}

// runOnLogs hands opts to runF when a test set it; otherwise it finds the default trace log when
// *logs holds no LOG argument (traceLogs) and runs.
func runOnLogs[T any](f *Factory, opts *T, logs *[]string, runF, run func(*T) error) error {
	if runF != nil {
		return runF(opts)
	}
	var err error
	if *logs, err = f.traceLogs(*logs); err != nil {
		return err
	}
	return run(opts)
}

// NewFactory builds the production factory from the process environment.
func NewFactory() *Factory {
	f := &Factory{IO: iostreams.System(), Getenv: os.Getenv}
	f.Now = func() time.Time { return time.Now().UTC() }
	return f
}

// clockFromEnv fixes the clock when TUNE_NOW is set.
func (f *Factory) clockFromEnv() error {
	if f.Getenv("TUNE_NOW") == "" {
		return nil
	}
	now, err := clock.FromEnv(f.Getenv)
	if err != nil {
		return err
	}
	f.Now = now
	return nil
}

// envOr returns the environment value of key, or def when it is unset.
func (f *Factory) envOr(key, def string) string {
	if v := f.Getenv(key); v != "" {
		return v
	}
	return def
}

// Env is the application layer's view of the factory: clock, environment and directories.
func (f *Factory) Env() app.Env {
	env := app.Env{Now: f.Now, Getenv: f.Getenv, WeightsDir: f.WeightsDir, FixturesDir: f.FixturesDir, ReportsDir: f.ReportsDir,
		Builtin: f.Builtin}
	if f.ProjectRoot != "" {
		env.Config = filepath.Join(f.ProjectRoot, project.ConfigFile)
		env.Root = f.ProjectRoot
	}
	return env
}
