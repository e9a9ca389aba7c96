package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/textfmt"
)

// AddOutputFlags declares the global --wide and --quiet flags on root. Both command trees (the light score front and
// the full one) declare it here, so that a command line and --help read the same in both; only the full
// tree prints tables (docs/decisions.md#table-width).
func AddOutputFlags(root *cobra.Command, wide, quiet *bool) {
	root.PersistentFlags().BoolVar(wide, "wide", false, "print tables at full width (by default a terminal's tables fit its width, $COLUMNS when set)")
	root.PersistentFlags().BoolVarP(quiet, "quiet", "q", false, "no notes on stderr (warnings and errors are still printed)")
}

// WarnLine is a warning as every command prints it on stderr: "tune: warning: WHERE: REASON" (without
// WHERE when it is empty), with its line end.
func WarnLine(where, reason string) string {
	if where != "" {
		where += ": "
	}
	// one line, whatever a file name or a quoted value holds (textfmt.OneLine)
	return "tune: warning: " + textfmt.OneLine(where+reason) + "\n"
}
