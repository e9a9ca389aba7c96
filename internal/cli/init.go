package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
)

type initOptions struct {
	IO    *IOStreams
	Dir   string
	Force bool
	// CI is the recipe --ci writes: github, gitlab or cron ("" none).
	CI   string
	JSON bool
}

// NewCmdInit builds `tune init`.
func NewCmdInit(f *Factory) *cobra.Command {
	return newCmdInit(f, nil)
}

func newCmdInit(f *Factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Start a tune project: weights store, fixture suite, tune.toml",
		Long: `Lay out a tune project in DIR (default: the current directory), from the files the binary
carries:

  weights/v0001.toml   the reference weights, the store's first version
  fixtures/suite/      the replay suite every proposal is measured on
  fixtures/holdout/    the frozen holdout split
  tune.toml            the project file, every key commented out with its default
  .gitignore           entries for the store's lock and marker files (added, never rewritten)

--ci github|gitlab|cron also writes the recipe of docs/nightly.md that runs tune nightly --branch
and opens a pull request for each change to review: the GitHub Actions workflows
(.github/workflows/tune-nightly.yml and tune-verify.yml), the GitLab CI jobs
(.gitlab/tune.gitlab-ci.yml, to include from .gitlab-ci.yml), or the crontab script
(tune-nightly.sh). In a git repository init ends with what to commit.

Every tune command run in DIR or below it finds tune.toml and uses these directories, and finds
.ldd/trace.log in the directory it runs from or the nearest parent that has one.

init refuses when any of these files exists, except that --ci in a project that already has a
weights store adds the recipe and keeps the project's files as they are. --force rewrites tune.toml
(the previous one is set aside as tune.toml.old) and the fixtures, but never the weights store: an
existing store's versions and log are kept as they are.`,
		Example: `  tune init
  tune init ~/src/shop-api
  tune init --force   # restore tune.toml and the fixtures; the store is kept
  tune init --ci github   # in an existing project: adds the workflows, keeps tune.toml`,
		Args: cmdutil.WantArgs(cobra.MaximumNArgs(1), "at most one directory (default the working directory), e.g. tune init ."),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = "."
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return initRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "rewrite tune.toml and the fixtures (never the weights store)")
	cmd.Flags().StringVar(&opts.CI, "ci", "", "also write the pull-request recipe: `github`, gitlab or cron (docs/nightly.md)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was written as JSON")
	return cmd
}

func initRun(opts *initOptions) error {
	res, err := app.Init(opts.Dir, opts.Force, opts.CI)
	if err != nil {
		return err
	}
	return view.Print(opts.IO.Out, opts.JSON, res, view.Init)
}
