package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/scorecmd"
)

// scoreOptions are `tune score`'s options; the command itself lives in internal/scorecmd, which the
// light front end (cmd/tune) runs without linking the rest of tune (docs/decisions.md#score-start-up).
type scoreOptions = scorecmd.Options

// NewCmdScore builds `tune score`.
func NewCmdScore(f *Factory) *cobra.Command {
	return newCmdScore(f, nil)
}

func newCmdScore(f *Factory, runF func(*scoreOptions) error) *cobra.Command {
	env := &scorecmd.Env{In: f.IO.In, Out: f.IO.Out, ErrOut: f.IO.ErrOut, Getenv: f.Getenv, WeightsDir: &f.WeightsDir, Quiet: &f.Quiet,
		Now: func() time.Time { return f.Now() }}
	return scorecmd.NewCmd(env, runF)
}
