package cli

import (
	"runtime/debug"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
	"github.com/spf13/cobra"
)

type versionOptions struct {
	IO   *IOStreams
	JSON bool
}

// NewCmdVersion builds `tune version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return newCmdVersion(f, nil)
}

func newCmdVersion(f *Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print tune's version, module version and VCS revision",
		Long: `Print the release version, the Go module version and the VCS revision (commit, commit time, and
whether the working tree had uncommitted changes) that the Go toolchain recorded in the binary. A
binary built outside a VCS checkout (or with -buildvcs=false) has no revision: the text says so and the
JSON keys "revision" and "time" are empty strings.`,
		Example: `  tune version
  tune version --json | jq -r .revision`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			bi, _ := debug.ReadBuildInfo()
			return view.Print(opts.IO.Out, opts.JSON, app.BuildVersion(Version, bi), view.Version)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the version information as JSON")
	return cmd
}
