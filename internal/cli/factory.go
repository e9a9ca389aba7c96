package cli

import (
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/clock"
	"github.com/ldd-tools/tune/internal/termtable"
)

// IOStreams are the streams a command reads and writes. Tests replace them with buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrIsTerminal reports whether ErrOut is a terminal (progress bars are drawn only then).
	ErrIsTerminal bool
	// OutIsTerminal reports whether Out is a terminal.
	OutIsTerminal bool
	// TermWidth is the width of the terminal Out writes to (0 when unknown).
	TermWidth func() int
}

// fitTables makes every table printed on Out fit the width termtable.Resolve decides from --wide,
// $COLUMNS and the terminal (docs/decisions.md#table-width).
func (s *IOStreams) fitTables(wide bool, columns string) {
	s.Out = termtable.WithWidth(s.Out, termtable.Resolve(wide, columns, s.OutIsTerminal, s.TermWidth))
}

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
}

// NewFactory builds the production factory from the process environment.
func NewFactory() *Factory {
	f := &Factory{
		IO: &IOStreams{
			In:            os.Stdin,
			Out:           os.Stdout,
			ErrOut:        os.Stderr,
			ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
			OutIsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
			TermWidth: func() int {
				w, _, err := term.GetSize(int(os.Stdout.Fd()))
				if err != nil {
					return 0
				}
				return w
			},
		},
		Getenv: os.Getenv,
	}
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
	return app.Env{Now: f.Now, Getenv: f.Getenv, WeightsDir: f.WeightsDir, FixturesDir: f.FixturesDir, ReportsDir: f.ReportsDir}
}
