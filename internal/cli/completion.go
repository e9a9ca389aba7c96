package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/store"
)

// addCompletions registers the shell completion of flag values and arguments (tune completion bash|zsh|
// fish|powershell writes the script): --by, proposal ids and weights versions (every --format completes
// its values where cmdutil.AddFormatFlags defines it). Values
// from the store are read from the project's store as the command would find it.
func addCompletions(root *cobra.Command, f *Factory) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
	}
	// find walks the tree by name: root.Find would merge a command's persistent flags into its own
	// before jsonfilter adds --jq and --template to them (tune report's).
	find := func(path string) *cobra.Command {
		cmd := root
		for _, name := range strings.Fields(path) {
			var next *cobra.Command
			for _, c := range cmd.Commands() {
				if c.Name() == name {
					next = c
				}
			}
			if next == nil {
				return nil
			}
			cmd = next
		}
		return cmd
	}
	flag := func(path, name string, fn cobra.CompletionFunc) {
		if cmd := find(path); cmd != nil && cmd.Flags().Lookup(name) != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, fn)
		}
	}
	args := func(path string, fn cobra.CompletionFunc) {
		if cmd := find(path); cmd != nil {
			cmd.ValidArgsFunction = fn
		}
	}
	flag("audit", "by", fixed(audit.GroupByNames()...))
	flag("init", "ci", fixed(app.CIKindNames()...))
	flag("watch", "version", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeVersions(cmd, f, true), cobra.ShellCompDirectiveNoFileComp
	})
	args("report proposal", func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeProposals(cmd, f), cobra.ShellCompDirectiveNoFileComp
	})
	flag("rollback", "to", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeVersions(cmd, f, false), cobra.ShellCompDirectiveNoFileComp
	})
	args("apply", func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completePending(cmd, f), cobra.ShellCompDirectiveDefault // ids, or a proposal file
	})
	args("weights show", func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeVersions(cmd, f, true), cobra.ShellCompDirectiveNoFileComp
	})
	args("diff", func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) >= 2 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return append(completeVersions(cmd, f, true), completeProposals(cmd, f)...), cobra.ShellCompDirectiveDefault
	})
}

// completionStore is the weights directory the command would use: completion runs without the root's
// pre-run, so the project is resolved here.
func completionStore(cmd *cobra.Command, f *Factory) string {
	g := *f // resolveProject points the directories of a copy, not of the factory
	_ = g.resolveProject(cmd.Flags())
	return g.WeightsDir
}

// completeVersions lists the store's versions (v0001, …), with "active" when withActive.
func completeVersions(cmd *cobra.Command, f *Factory, withActive bool) []cobra.Completion {
	var out []cobra.Completion
	if withActive {
		out = append(out, "active")
	}
	return append(out, store.VersionNames(completionStore(cmd, f))...)
}

// completeProposals lists the pending proposal ids (p-…).
func completeProposals(cmd *cobra.Command, f *Factory) []cobra.Completion {
	return store.ProposalIDs(completionStore(cmd, f))
}

// completePending lists the proposals tune apply would write: accepted or halved, not applied yet,
// measured against the active version (the re-reviews: it offered a "none" proposal, an applied one
// and one whose parent is no longer active, which apply refuses).
func completePending(cmd *cobra.Command, f *Factory) []cobra.Completion {
	s, err := store.Open(completionStore(cmd, f), nil)
	if err != nil {
		return nil
	}
	pending, err := s.PendingProposals()
	if err != nil {
		return nil
	}
	active, err := s.ActiveVersion()
	if err != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(pending))
	for _, p := range pending {
		if p.Parent == active {
			out = append(out, p.ID)
		}
	}
	slices.Sort(out)
	return out
}
