package cmdutil

import "github.com/spf13/cobra"

// AddWideFlag declares the global --wide flag on root. Both command trees (the light score front and
// the full one) declare it here, so that a command line and --help read the same in both; only the full
// tree prints tables (docs/decisions.md#table-width).
func AddWideFlag(root *cobra.Command, wide *bool) {
	root.PersistentFlags().BoolVar(wide, "wide", false, "print tables at full width (by default a terminal's tables fit its width, $COLUMNS when set)")
}
