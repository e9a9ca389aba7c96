package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// addCompletions registers the shell completion of flag values and arguments (tune completion bash|zsh|
// fish|powershell writes the script): --by, every --format, proposal ids and weights versions. Values
// from the store are read from the project's store as the command would find it.
func addCompletions(root *cobra.Command, f *Factory) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
	}
	flag := func(path, name string, fn cobra.CompletionFunc) {
		if cmd, _, err := root.Find(strings.Fields(path)); err == nil && cmd.Flags().Lookup(name) != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, fn)
		}
	}
	args := func(path string, fn cobra.CompletionFunc) {
		if cmd, _, err := root.Find(strings.Fields(path)); err == nil && cmd.Name() == strings.Fields(path)[len(strings.Fields(path))-1] {
			cmd.ValidArgsFunction = fn
		}
	}
	flag("audit", "by", fixed(audit.GroupByNames()...))
	flag("audit", "format", fixed("text", "json", "csv", "jsonl", "parquet"))
	flag("audit ab", "format", fixed(audit.ABFormats...))
	flag("diff", "format", fixed("text", "markdown", "json"))
	flag("trace", "format", fixed("text", "json", "jsonl", "parquet"))
	flag("rollback", "to", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeVersions(cmd, f, false), cobra.ShellCompDirectiveNoFileComp
	})
	args("apply", func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeProposals(cmd, f), cobra.ShellCompDirectiveDefault // ids, or a proposal file
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
	dir := f.WeightsDir
	if wd, err := os.Getwd(); err == nil {
		var fixtures, reports string
		_, _, _ = project.Resolve(wd, cmd.Flags().Changed, f.Getenv,
			project.Dir{Flag: "weights-dir", Env: "TUNE_WEIGHTS_DIR", Sub: "weights", Value: &dir},
			project.Dir{Flag: "fixtures-dir", Env: "TUNE_FIXTURES_DIR", Sub: "fixtures", Value: &fixtures},
			project.Dir{Flag: "reports-dir", Env: "TUNE_REPORTS_DIR", Sub: "reports", Value: &reports})
	}
	return dir
}

// completeVersions lists the store's versions (v0001, …), with "active" when withActive.
func completeVersions(cmd *cobra.Command, f *Factory, withActive bool) []cobra.Completion {
	var out []cobra.Completion
	if withActive {
		out = append(out, "active")
	}
	s, err := store.Open(completionStore(cmd, f), nil)
	if err != nil {
		return out
	}
	nums, err := s.Versions()
	if err != nil {
		return out
	}
	for _, n := range nums {
		out = append(out, weights.VersionName(n))
	}
	return out
}

// completeProposals lists the pending proposal ids (p-…).
func completeProposals(cmd *cobra.Command, f *Factory) []cobra.Completion {
	files, _ := filepath.Glob(filepath.Join(completionStore(cmd, f), store.ProposalsDir, "p-*.json"))
	var out []cobra.Completion
	for _, p := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	sort.Strings(out)
	return out
}
