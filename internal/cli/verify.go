package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

type verifyOptions struct {
	IO         *IOStreams
	WeightsDir string
	JSON       bool
}

// NewCmdVerify builds `tune verify`.
func NewCmdVerify(f *Factory) *cobra.Command {
	return newCmdVerify(f, nil)
}

func newCmdVerify(f *Factory, runF func(*verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the weights store: version files, weights.sum, the evolution log chain",
		Long: `Check that the weights store is exactly what tune wrote.

Every version file is compared with weights.sum (an atlas.sum-style running checksum) and with the
sha256 the evolution log recorded when the version was written. The log itself is checked as a hash
chain (each line holds the sha256 of the line before), with serials going up by one and one lineage.

verify lists every problem it finds and exits 1: an edited, missing or extra version file, a sum
file that does not match, a broken chain, a serial gap, a lineage change, or the marker of an
interrupted operation (.pending.json). It exits 0 when the store is intact. A store as shipped
(only v0001.toml, no log yet) is intact.

What to do next: an interrupted operation → tune repair. An intended hand edit → tune repair
--resign (logged loudly). Anything else → restore the file from version control.`,
		Example: `  tune verify
  tune verify --json | jq '.problems[].file'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir = f.WeightsDir
			if runF != nil {
				return runF(opts)
			}
			return verifyRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

type verifyReport struct {
	Dir      string          `json:"dir"`
	Intact   bool            `json:"intact"`
	Versions int             `json:"versions"`
	Active   string          `json:"active"`
	Serial   int             `json:"serial"`
	Lineage  string          `json:"lineage,omitempty"`
	Problems []store.Problem `json:"problems"`
}

func verifyRun(opts *verifyOptions) error {
	s, err := store.Open(opts.WeightsDir, nil)
	if err == nil {
		s.Reference = tune.ReferenceWeights // an unsigned hand edit of v0001 is reported too
	}
	if err != nil {
		return err
	}
	problems := s.Verify()
	versions, err := s.Versions()
	if err != nil {
		return err
	}
	active, err := s.LoggedActive()
	if err != nil {
		return err
	}
	serial, lineage := s.Head()
	rep := verifyReport{Dir: opts.WeightsDir, Intact: len(problems) == 0, Versions: len(versions), Active: weights.VersionName(active),
		Serial: serial, Lineage: lineage, Problems: problems}
	if rep.Problems == nil {
		rep.Problems = []store.Problem{}
	}
	if opts.JSON {
		if err := storeWriteJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else {
		printVerify(opts.IO.Out, &rep)
	}
	if !rep.Intact {
		return ErrSilent
	}
	return nil
}

func printVerify(w io.Writer, rep *verifyReport) {
	if rep.Intact {
		log := fmt.Sprintf("evolution log at serial %d (lineage %s), weights.sum matches", rep.Serial, rep.Lineage)
		if rep.Serial == 0 {
			log = "no evolution log yet (the first apply, rollback or logged attempt starts it)"
		}
		fmt.Fprintf(w, "weights store %s is intact: %s, active %s; %s\n", rep.Dir, plural(rep.Versions, "version"), rep.Active, log)
		return
	}
	fmt.Fprintf(w, "weights store %s does NOT verify (%s):\n", rep.Dir, plural(len(rep.Problems), "problem"))
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
	fmt.Fprintln(w, "Next: an interrupted operation → tune repair; an intended hand edit → tune repair --resign; anything else → restore the file from version control.")
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// storeWriteJSON prints v as indented JSON with "<" and ">" left readable (signal "components>=3").
func storeWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// storeNothingToDo turns store.ErrNothingToDo into a note on stderr and exit 0.
func storeNothingToDo(io *IOStreams, err error) error {
	if errors.Is(err, store.ErrNothingToDo) {
		fmt.Fprintln(io.ErrOut, "tune:", err)
		return nil
	}
	return err
}
