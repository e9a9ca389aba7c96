package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/tracecmd"
	"github.com/ldd-tools/tune/internal/traceout"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/view"
)

// traceOptions are tune trace's options; the command itself is tracecmd's, shared with the light binary.
type traceOptions = tracecmd.Options

// NewCmdTrace builds `tune trace`.
func NewCmdTrace(f *Factory) *cobra.Command {
	return newCmdTrace(f, nil)
}

func newCmdTrace(f *Factory, runF func(*traceOptions) error) *cobra.Command {
	return tracecmd.NewCmd(&tracecmd.Env{Out: &f.IO.Out, ErrOut: &f.IO.ErrOut}, func(opts *traceOptions) error {
		return runOnLogs(f, opts, &opts.Logs, runF, traceRun)
	})
}

func traceRun(opts *traceOptions) error {
	if tracecmd.Streams(opts) {
		return tracecmd.RunJSON(opts)
	}
	out, err := view.NewTraceOutput(opts.Format, *opts.Env.Out, *opts.Env.ErrOut, opts.Out, opts.Force, len(opts.Logs))
	if err != nil {
		return err
	}
	defer out.Abort() // nothing once committed
	res, err := traceout.Read(traceout.Options{Logs: opts.Logs, Last: opts.Last, LastSet: opts.LastSet, MaxLine: opts.MaxLine,
		KeepWarnings: opts.Format == "json"}, out.Writer, func(w traceparse.Warning, tailed bool) { tracecmd.Warn(*opts.Env.ErrOut, w, tailed) })
	if err != nil {
		return err
	}
	if err := out.Render(res); err != nil {
		return err
	}
	if err := tracecmd.Strict(opts, res); err != nil {
		return err
	}
	return out.Commit()
}
