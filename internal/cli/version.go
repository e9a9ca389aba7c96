package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/ldd-tools/tune/internal/view"
	"github.com/spf13/cobra"
)

type versionOptions struct {
	IO   *IOStreams
	JSON bool
}

// versionInfo is what `tune version` prints: the release (Version, set at link time), the module
// version and the VCS revision the Go toolchain stamped into the binary (debug.ReadBuildInfo).
type versionInfo struct {
	Version  string `json:"version"`
	Module   string `json:"module"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
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
binary built outside a VCS checkout (or with -buildvcs=false) has no revision.`,
		Example: `  tune version
  tune version --json | jq -r .revision`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			bi, _ := debug.ReadBuildInfo()
			info := buildVersion(Version, bi)
			if opts.JSON {
				return view.WriteJSON(opts.IO.Out, info)
			}
			return printVersion(opts.IO.Out, info)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the version information as JSON")
	return cmd
}

// buildVersion reads the module version and the vcs.* settings of bi (nil when the binary has none).
func buildVersion(release string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: release, Module: "unknown"}
	if bi == nil {
		return v
	}
	v.Go = bi.GoVersion
	v.Module = bi.Main.Path + " " + bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func printVersion(w io.Writer, v versionInfo) error {
	fmt.Fprintf(w, "tune %s\nmodule: %s\n", v.Version, v.Module)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(w, "revision: %s%s %s\n", v.Revision, mod, v.Time)
	} else {
		fmt.Fprintln(w, "revision: unknown (built without VCS information)")
	}
	_, err := fmt.Fprintf(w, "go: %s\n", v.Go)
	return err
}
