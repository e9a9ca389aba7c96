package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/effort"
)

type effortOptions struct {
	IO     *IOStreams
	Getenv func(string) string

	Repo string
	JSON bool
}

// NewCmdEffort builds `tune effort`.
func NewCmdEffort(f *Factory) *cobra.Command {
	return newCmdEffort(f, nil)
}

func newCmdEffort(f *Factory, runF func(*effortOptions) error) *cobra.Command {
	opts := &effortOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "effort --repo DIR",
		Short: "Check the effort pins of agents and skills",
		Long: `Check the effort design of a Claude Code set-up: every agent and skill pins a reasoning effort
level (low, medium, high, xhigh, max) in its YAML frontmatter ("effort: high"), and the session
level comes from settings.json.

The census (--repo DIR) reads agents/*.md, .claude/agents/*.md, skills/*/SKILL.md and
.claude/skills/*/SKILL.md (skill folders linked in from elsewhere, such as vendored skills, are
followed), checks that each effort: is a level, lists the agents and skills that pin none, and reads
effortLevel and env.CLAUDE_CODE_EFFORT_LEVEL from settings.json, .claude/settings.json and
.claude/settings.local.json. CLAUDE_CODE_EFFORT_LEVEL beats every pin and every shift, so setting it
is a warning. Frontmatter that does not parse, a level that does not exist and an unresolvable link
are warnings on stderr naming the file and line; they never stop the census.

--json prints {"repo", "pins": [{"kind", "name", "effort", "file", "line", "link"}], "unpinned",
"settings", "warnings"}.`,
		Example: `  tune effort --repo ~/.claude
  tune effort --repo . --json | jq '.unpinned[].name'`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if opts.Repo == "" {
				return FlagErrorf("--repo is required: the directory that holds agents/ and skills/")
			}
			if runF != nil {
				return runF(opts)
			}
			return effortRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "read the effort pins of the agents and skills in `DIR`")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func effortRun(opts *effortOptions) error {
	info, err := os.Stat(opts.Repo)
	if err != nil {
		return fmt.Errorf("--repo: %w", err)
	}
	if !info.IsDir() {
		return FlagErrorf("--repo %s: not a directory", opts.Repo)
	}
	census, err := effort.TakeCensus(os.DirFS(opts.Repo))
	if err != nil {
		return err
	}
	rep := effort.NewReport(opts.Repo, census)
	for _, w := range rep.Warnings {
		fmt.Fprintf(opts.IO.ErrOut, "tune: warning: %s\n", effortWarning(opts.Repo, w))
	}
	if opts.JSON {
		return effort.WriteJSON(opts.IO.Out, rep)
	}
	return effort.WriteText(opts.IO.Out, rep)
}

// effortWarning is "FILE:LINE: reason", the file under the repository as the user named it.
func effortWarning(repo string, w effort.Warning) string {
	file := w.File
	if repo != "" && repo != "." {
		file = repo + "/" + file
	}
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", file, w.Line, w.Reason)
	}
	return fmt.Sprintf("%s: %s", file, w.Reason)
}
