package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// formatValues is the annotation of a --format flag that lists the values it takes.
const formatValues = "tune_format_values"

// AddFormatFlags defines --format, which takes one of values (the first is the default), and, when
// jsonUsage is not empty, --json, its short form. The values are declared once: CheckFormat checks
// them and the shell completes them.
func AddFormatFlags(cmd *cobra.Command, format *string, asJSON *bool, values []string, usage, jsonUsage string) {
	cmd.Flags().StringVar(format, "format", values[0], usage)
	_ = cmd.Flags().SetAnnotation("format", formatValues, values)
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
	if jsonUsage != "" {
		cmd.Flags().BoolVar(asJSON, "json", false, jsonUsage)
	}
}

// CheckFormat checks the flags AddFormatFlags defined: --json is --format json (a --format given
// with another value conflicts with it) and --format is one of its values. Its refusals are usage
// errors.
func CheckFormat(cmd *cobra.Command) error {
	flags := cmd.Flags()
	format, _ := flags.GetString("format")
	if asJSON, _ := flags.GetBool("json"); asJSON {
		if flags.Changed("format") && format != "json" {
			return exitcode.FlagErrorf("--json and --format %s conflict", format)
		}
		format = "json"
		_ = flags.Set("format", format)
	}
	values := flags.Lookup("format").Annotations[formatValues]
	if !slices.Contains(values, format) {
		return exitcode.FlagErrorf("--format %q: want %s", format, OneOf(values))
	}
	return nil
}

// OneOf lists values as a usage error names the accepted ones: "a, b or c".
func OneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return fmt.Sprintf("%s or %s", strings.Join(values[:len(values)-1], ", "), values[len(values)-1])
}

// AddExpectSerialFlag defines --expect-serial (apply, rollback). Its flag default is 0 so that --help
// does not show the -1 sentinel; ResolveExpectSerial turns "not given" into -1.
func AddExpectSerialFlag(cmd *cobra.Command, serial *int) {
	cmd.Flags().IntVar(serial, "expect-serial", 0,
		"refuse unless the evolution log is at this `serial` (as shown by tune history; default: not checked)")
}

// ResolveExpectSerial sets *serial to -1 when --expect-serial was not given, and refuses a negative
// one (an explicit -1 used to pass silently as "not checked").
func ResolveExpectSerial(cmd *cobra.Command, serial *int) error {
	if !cmd.Flags().Changed("expect-serial") {
		*serial = -1
		return nil
	}
	if *serial < 0 {
		return exitcode.FlagErrorf("--expect-serial must be 0 or more")
	}
	return nil
}
