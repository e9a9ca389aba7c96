package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/view"
)

type verifyOptions struct {
	IO          *IOStreams
	WeightsDir  string
	FixturesDir string  // where an interrupted apply's harvested fixtures go: its marker is checked against it
	ReportsDir  string  // temp files of killed report writes there are reported
	Config      string  // the project's tune.toml ("" outside a project): reported when not a regular file
	Env         app.Env // the fixture suite is read as a night reads it (Env.LoadSuite)
	NamedConfig string  // TUNE_CONFIG: read too when set, as every command reads it instead
	// Base is a git revision the store must extend, append-only (--base).
	Base string
	JSON bool
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
interrupted operation (.pending.json). A marker is checked as tune repair checks it: one that does
not describe the next apply or rollback the log allows, byte for byte, is reported as forged, with the
reason (repair refuses it). Temp files (.NAME.tmp-*) left by a killed write, in the store, in the
harvested fixtures or in the --reports-dir, are listed as stale. It exits 0 when the store is intact. A store as shipped
(only v0001.toml, no log yet) is intact.

--base REV also checks the store against the same store at the git revision REV (the base branch
of a pull request): every version file and log entry of REV is still there, unchanged; every ledger
key of REV still credits the same version; and every version HEAD adds equals what the log entry
that wrote it says (a rollback equals the version it restores, an apply its proposal's candidate). A
branch that rewrites the store's history and re-signs it verifies on its own, but not with --base.
It also names what the range changes in the frozen holdout (its scenarios under the fixtures'
holdout/, and tune.toml's [evolve] holdout rule): no rule of tune changes them, a reviewed change
may, so they are listed for the reviewer and do not fail the check.

What to do next: an interrupted operation → tune repair. A forged marker → inspect it and delete it
by hand. An intended hand edit → tune repair --resign (logged loudly). Anything else → restore the
file from version control.`,
		Example: `  tune verify
  tune verify --json | jq '.problems[].file'
  tune verify --base origin/main   # in a pull request: the store only grows`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir, opts.FixturesDir, opts.ReportsDir, opts.Config = f.WeightsDir, f.FixturesDir, f.ReportsDir, f.Env().Config
			opts.Env = f.Env()
			opts.NamedConfig = f.Getenv("TUNE_CONFIG")
			if runF != nil {
				return runF(opts)
			}
			return verifyRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&opts.Base, "base", "", "also check that the store extends the store at this git `revision`, append-only")
	return cmd
}

func verifyRun(opts *verifyOptions) error {
	rep, err := app.Verify(opts.WeightsDir, opts.FixturesDir, opts.ReportsDir)
	if err == nil {
		rep.AddConfig(opts.Config)
		if opts.NamedConfig != "" && opts.NamedConfig != opts.Config {
			rep.AddNamedConfig(opts.NamedConfig)
		}
		rep.AddFixtures(opts.Env)
	}
	if err == nil && opts.Base != "" {
		err = rep.AddBase(opts.WeightsDir, opts.Base)
	}
	if err == nil && opts.Base != "" {
		rep.AddHoldoutChanges(opts.WeightsDir, opts.FixturesDir, opts.Config)
	}
	if err == nil {
		err = view.Print(opts.IO.Out, opts.JSON, rep, view.Verify)
	}
	if err == nil && !rep.Intact {
		return ErrSilent
	}
	return err
}

// storeNothingToDo turns store.ErrNothingToDo into a note on stderr and exit 0.
func storeNothingToDo(io *IOStreams, err error) error {
	if errors.Is(err, store.ErrNothingToDo) {
		fmt.Fprintln(io.ErrOut, "tune:", err)
		return nil
	}
	return err
}
