package cmdutil

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// wantAnnotation is the annotation of a flag that says, in the user's words, what its value is.
const wantAnnotation = "tune_want"

// Want records what the value of flag name is ("a number of tasks, e.g. --last 20"), for the error
// that refuses a value of the wrong form.
func Want(cmd *cobra.Command, name, form string) {
	_ = cmd.Flags().SetAnnotation(name, wantAnnotation, []string{form})
}

// FlagError is the flag error function of every command tree (cobra's SetFlagErrorFunc): it makes
// each flag error a usage error, and says what a value of the wrong form should have been instead of
// strconv's words: `invalid argument "abc" for --last: want a number of tasks, e.g. --last 20`.
// It reads pflag's typed error, never the message.
func FlagError(_ *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		f := bad.GetFlag()
		return exitcode.FlagErrorf("invalid argument %q for --%s: want %s", bad.GetValue(), f.Name, wantOf(f))
	}
	return exitcode.AsFlagError(err)
}

// wantOf is what a flag's value should be: its Want annotation, else what its type takes.
func wantOf(f *pflag.Flag) string {
	if w := f.Annotations[wantAnnotation]; len(w) > 0 {
		return w[0]
	}
	switch t := f.Value.Type(); {
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number, e.g. --" + f.Name + " 10"
	case strings.HasPrefix(t, "float"):
		return "a number, e.g. --" + f.Name + " 0.5"
	case t == "duration":
		return "a duration, e.g. --" + f.Name + " 90s (units: ms, s, m, h)"
	case t == "bool":
		return "true or false (or the flag alone for true)"
	default:
		return "a " + t
	}
}

// WantArgs is the argument validator v whose refusal names what the command wants, after its
// synopsis: "tune diff A B: want two versions or proposals, e.g. tune diff active …". It is a usage
// error.
func WantArgs(v cobra.PositionalArgs, want string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if v(cmd, args) == nil {
			return nil
		}
		return exitcode.FlagErrorf("%s: want %s", Synopsis(cmd), want)
	}
}

// Synopsis is the command path with the arguments its Use line names: "tune diff A B".
func Synopsis(cmd *cobra.Command) string {
	s := cmd.CommandPath()
	if _, rest, ok := strings.Cut(cmd.Use, " "); ok {
		s += " " + rest
	}
	return s
}
