package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
)

type effortOptions struct {
	IO  *IOStreams
	Env app.Env // the project's tune.toml, as the command runs

	app.EffortOptions
	CostMode string // --cost-mode: EffortOptions.CostMode
	JSON     bool
	Notes    io.Writer // stderr, or io.Discard with --quiet
}

// NewCmdEffort builds `tune effort`.
func NewCmdEffort(f *Factory) *cobra.Command {
	return newCmdEffort(f, nil)
}

func newCmdEffort(f *Factory, runF func(*effortOptions) error) *cobra.Command {
	opts := &effortOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "effort [PATH...] [--repo DIR]",
		Short: "Check that effort pins and phase shifts actually take effect",
		Long: `Check the effort design of a Claude Code set-up: every agent and skill pins a reasoning effort
level (low, medium, high, xhigh, max) in its YAML frontmatter ("effort: high"), and the main loop
shifts level per phase with one-line Skill(effort-<level>) calls. tune effort checks that the pins
are written (the census) and that they happen (the transcripts).

Census (--repo DIR, else the project root — the directory of tune.toml — when it holds agents/,
skills/, .claude/ or settings.json): agents/*.md, .claude/agents/*.md, skills/*/SKILL.md and
.claude/skills/*/SKILL.md (skill folders linked in from elsewhere, such as vendored skills, are
followed); each effort: must be a level; agents and skills without one are listed; effortLevel and
env.CLAUDE_CODE_EFFORT_LEVEL are read from settings.json, .claude/settings.json and
.claude/settings.local.json (CLAUDE_CODE_EFFORT_LEVEL beats every pin and shift: a warning).

Transcripts (PATH arguments, else found as tune audit finds them; --census-only skips them):
  - the main loop's level, request by request, per session;
  - every Skill call of a pinned skill (without a census: the effort-<level> shifters), with the
    level it asks for, whether it is paired (another tool call follows it in the same assistant
    message: a lone Skill call is a no-op) and whether the next main-loop request runs at that
    level. Verdicts: ok, "no-op: lone call", ignored (the level did not move), "unexpected level"
    (it moved elsewhere, e.g. xhigh falling back to high), overridden (a later pinned Skill call
    of the same message asked for the level that ran), unknown (not recorded);
  - with a census, every nested skill: a pinned skill loaded after the turn's orchestrator (the
    pinned skill the user typed, /feat, else the turn's first pinned Skill call that is not a
    shifter) with another level. The orchestrator must reload its own level afterwards:
    re-asserted, superseded (a shifter moved to another level first), or "not re-asserted" (the
    nested level held to the end of the turn);
  - every subagent run, attributed to its agent type (agent-<id>.meta.json, else the dispatching
    Task/Agent call's subagent_type), its levels against the agent's pin: conformant, "off its pin",
    or inherits (an unpinned agent runs at the level in force);
  - shifts inside subagents (the design forbids them), sessions whose level never moves despite
    paired shifts (CLAUDE_CODE_EFFORT_LEVEL or a headless run), and requests, output, thinking,
    weighted spend and cost per level and per phase: the requests tune audit counts, priced as it
    prices them (--pricing, --cost-mode).
Transcripts written before Claude Code recorded effort (≈2.1.21x) show the level as unknown: it is
never guessed.

Warnings (bad frontmatter, unusable transcript lines) go to stderr with the file and line. --json
prints {"pins", "unpinned", "settings", "shifts", "reasserts", "agents", "runs", "subagent_shifts",
"stuck_sessions", "sessions", "by_level", "by_phase", "transcripts", "warnings"}.

Exit status: 0 whatever the verdicts, 1 when a file cannot be read, 2 on a usage error. The
verdicts are findings, not failures of the command; to fail a CI job on them, select them from
--json (jq -e exits 1 when its result is false or null; see the last example).`,
		Example: `  tune effort --repo ~/.claude
  tune effort --repo . ~/.claude/projects/-home-me-shop-api
  tune effort --repo . --census-only --json | jq '.unpinned[].name'
  tune effort --json | jq '.shifts[] | select(.verdict != "ok")'
  tune effort --repo . --json | jq -e '[.shifts[], .reasserts[]
      | select(.verdict == "no-op: lone call" or .verdict == "not re-asserted")]
      + [.agents[] | select(.conformant == false)] | length == 0'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths, opts.Env, opts.Notes = args, f.Env(), f.noteOut()
			if err := opts.Complete(opts.CostMode); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return effortRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "read the effort pins of the agents and skills in `DIR`")
	cmd.Flags().BoolVar(&opts.CensusOnly, "census-only", false, "read the pins of --repo only, no transcripts")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&opts.Pricing, "pricing", "", "read prices from `FILE` (JSON as the embedded table; its models replace or add to the embedded ones)")
	cmd.Flags().StringVar(&opts.CostMode, "cost-mode", "auto", costModeUsage)
	return cmd
}

func effortRun(opts *effortOptions) error {
	if err := app.CheckRepo(opts.Repo); err != nil {
		return err
	}
	res, err := app.Effort(opts.Env, opts.EffortOptions)
	if res == nil {
		return err
	}
	view.EffortNotes(opts.IO.ErrOut, opts.Notes, res, opts.Repo)
	if err != nil {
		return err
	}
	if opts.JSON {
		return view.EffortJSON(opts.IO.Out, res.Report)
	}
	return view.EffortText(opts.IO.Out, res.Report)
}
