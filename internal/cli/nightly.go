package cli

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/view"
)

type nightlyOptions struct {
	evolveOptions
	Globs []string
	// Branch writes a change to review as a commit on its branch tune/<parent>-<hash> (app.NightlyBranch).
	Branch bool
}

// NewCmdNightly builds `tune nightly`.
func NewCmdNightly(f *Factory) *cobra.Command { return newCmdNightly(f, nil) }

func newCmdNightly(f *Factory, runF func(*nightlyOptions) error) *cobra.Command {
	opts := &nightlyOptions{evolveOptions: evolveOptions{IO: f.IO}}
	cmd := &cobra.Command{
		Use:   "nightly [LOG... | --logs GLOB]",
		Short: "The cron entry point: lock, evolve, write the EVAL report, print a summary",
		Long: `Run the evolve loop (tune evolve) over the trace logs under a lock, write the pending proposal
and its EVAL report under --reports-dir, and print a summary a scheduler can act on:

  exit 0  done (a proposal is pending), nothing to do, or a refused night (the summary says why:
          "refused: …", a parity price or holdout veto in the attempts; the proposal is a revert).
          A "held:" line (--json "held") names a change only the frozen holdout refused: the
          evidence and the stated losses want it, and a human decides (` + app.EscalationDoc + `);
          with tune.toml [evolve] holdout = "priced", a "holdout paid:" line names a kept change
          whose holdout loss the history's gain paid for; a "held: … at the drift bound … no page"
          line (--json "drift_held") names a stop on a knob tune.toml's [evolve.drift_acknowledged]
          holds at its value, which a human has read
  exit 1  error, or another tune nightly holds the lock (the second run exits at once)
  exit 2  usage error (a flag or argument is wrong: fix the crontab line or the workflow)
  exit 3  escalation: the loop hit its step cap while progressing, or a change would move a weight
          more than 2 points from v0001 (the drift bound); the state dump is written and the
          output points to ` + app.EscalationDoc + `

What the night leaves to review is in the summary's "review:" line and in --json "review":
"change" (a proposal that changes weights), "rollback" (the watch's rollback of the applied
version; it wins over a change) or "" (nothing to review). Logs that read no task in a project
that has evolved before are an error (exit 1): a log was emptied, rotated or moved.

Safe to run twice: the proposal id is derived from its content, so a re-run on the same inputs
finds the same proposal, writes the same report bytes and adds nothing to the evolution log.
Nothing is applied: a reviewer runs tune apply after reading the report.

A night decides from every task the logs hold, but reads only the new ones: it keeps what it
counted for good in weights/.cache (git-ignored; --branch nights carry it too) and the next night
takes that up, whatever the spelling of the log paths. The summary says how much came from there
("taken up from the last night's state"; --json "tasks_from_state"). The cache is checked against
the logs' bytes and refused when it does not fit them; deleting it only makes the next night read
everything again.

--branch runs the night on a temporary copy of the store at HEAD instead, and never touches the
checked-out work tree: a change to review is applied there as tune apply would, and committed
(the new version, the evolution log and its ledger, weights.sum, the harvested fixtures, the EVAL
report and the pull request body) on the branch tune/<parent version>-<change hash>, named by the
change, not the night. Merging that branch makes the change active; nothing runs after the merge.
A later night that proposes the same change on the same base leaves the branch (and its open pull
request) as it is, however its evidence grew (--json "branch_updated": false); a moved base
rebuilds it. --json adds "branch", "branch_proposal" (the proposal the branch holds), "title",
"body_file" (the pull request body, in the git directory; "body_path" is its copy on the branch),
"commit" and "base" (the branch's commit and its parent), "branch_updated" and "supersedes" (tune's
other unmerged branches, whose pull requests to close: a name tune gives and a commit naming its
proposal; a person's branch under tune/ is never listed). A night with nothing to review adds
"stale" instead: tune's open branches made on a version no longer active, whose pull requests to
close. See docs/nightly.md for a crontab line, a GitHub Actions workflow and a GitLab CI job.

--declined names branches whose pull requests a reviewer closed unmerged: their no. On that
version the night refuses every weight such a change moved (read from the branch, or from its own
change when it would propose that one again), and proposes the next change the evidence prefers,
or nothing; --json "declined" lists them. The recipes pass every such branch ("Saying no" in
docs/nightly.md).`,
		Example: `  tune nightly
  tune nightly --logs '/srv/projects/*/.ldd/trace.log' --json
  tune nightly --branch --logs 'traces/*/trace.log' --json
  tune nightly --branch --declined tune/v0003-5f1c0a9e2b7d --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.bind(f, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return nightlyRun(f, opts)
		},
	}
	addEvolveFlags(cmd, &opts.evolveOptions)
	cmd.Flags().StringArrayVar(&opts.Globs, "logs", nil, "trace logs to read, as a shell `glob` (repeatable)")
	cmd.Flags().BoolVar(&opts.Branch, "branch", false, "commit a change to review on its branch tune/<parent>-<hash>, applied, without touching the work tree")
	cmd.Flags().StringArrayVar(&opts.Declined, "declined", nil, "with --branch: `branches` whose pull requests a reviewer closed unmerged (comma-separated, repeatable); the weights their changes moved are not changed again on that version")
	_ = cmd.Flags().MarkHidden("apply") // nightly never applies: a reviewer does; --apply is a usage error
	return cmd
}

func nightlyRun(f *Factory, opts *nightlyOptions) error {
	if opts.Apply {
		// the shared evolve flag, accepted and then ignored, let a cron line believe it applied
		return FlagErrorf("--apply: tune nightly never applies; a reviewer runs tune apply ID after reading the report (tune evolve --apply applies at once)")
	}
	// Split by hand, not as CSV: a quote in a branch name (git allows it) must not make every night a
	// usage error, and "a, b" means two names.
	var declined []string
	for _, arg := range opts.Declined {
		for _, name := range strings.Split(arg, ",") {
			switch name = strings.TrimSpace(name); {
			case name == "":
			case !app.IsChangeBranch(name):
				view.Warn(opts.IO.ErrOut, "--declined", fmt.Sprintf("%q is not a branch tune nightly names (%sv0003-<12 hex digits>): ignored", name, app.BranchPrefix))
			default:
				declined = append(declined, name)
			}
		}
	}
	opts.Declined = declined
	if len(opts.Declined) > 0 && !opts.Branch {
		return FlagErrorf("--declined names pull-request branches: it needs --branch")
	}
	logs, err := project.ExpandLogs(opts.Logs, opts.Globs)
	if err != nil {
		return err
	}
	if opts.Logs, err = f.traceLogs(logs); err != nil {
		return err
	}
	var out *app.NightlyResult
	if opts.Branch {
		out, err = app.NightlyBranch(opts.Env, opts.EvolveOptions, pullRequestBody)
	} else {
		out, err = app.Nightly(opts.Env, opts.EvolveOptions)
	}
	if err != nil {
		return err
	}
	view.Warnings(opts.IO.ErrOut, out.Warnings, view.NewTails(out.Tails))
	if err := view.Print(opts.IO.Out, opts.JSON, out, view.Nightly); err != nil {
		return err
	}
	return out.Escalation()
}

// pullRequestBody is the Markdown diff of a proposal against the active version: what tune diff
// active PROPOSAL --format markdown prints.
func pullRequestBody(weightsDir, proposal string) ([]byte, error) {
	rep, err := app.Diff(weightsDir, "active", proposal)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := view.DiffMarkdown(&b, rep); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
