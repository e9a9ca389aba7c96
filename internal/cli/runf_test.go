package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runFCase runs one command built with a runF hook on args and lists what the parsed options must
// hold (substrings of their %+v form).
type runFCase struct {
	path  string // command path under tune, e.g. "audit ab"
	args  []string
	build func(f *Factory, got *any) *cobra.Command
	want  []string
}

// hook builds a runF that keeps the options and runs nothing.
func hook[T any](got *any) func(*T) error {
	return func(o *T) error { *got = o; return nil }
}

func runFCases() []runFCase {
	acc := func(f *Factory, g *any) *cobra.Command { return newCmdAccuracy(f, hook[accuracyOptions](g)) }
	audit := func(f *Factory, g *any) *cobra.Command { return newCmdAudit(f, hook[auditOptions](g)) }
	ab := func(f *Factory, g *any) *cobra.Command { return newCmdAuditAB(f, hook[auditABOptions](g)) }
	repair := func(f *Factory, g *any) *cobra.Command { return newCmdRepair(f, hook[repairOptions](g)) }
	report := func(f *Factory, g *any) *cobra.Command { return newCmdReport(f, hook[reportOptions](g)) }
	trace := func(f *Factory, g *any) *cobra.Command { return newCmdTrace(f, hook[traceOptions](g)) }
	return []runFCase{
		{"accuracy", []string{"a.log", "--days", "7", "--json"}, acc, []string{"Logs:[a.log]", "Days:7", "JSON:true"}},
		{"apply", []string{"p-1", "--expect-serial", "3", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdApply(f, hook[applyOptions](g)) },
			[]string{"Proposal:p-1", "ExpectSerial:3", "JSON:true"}},
		{"audit", []string{"t", "--by", "day", "--since", "2026-01-01", "--until", "2026-01-31", "--timezone", "UTC", "--breakdown", "--strict",
			"--pricing", "p.json", "--json", "--ccusage", "daily", "--label", "high", "--max-line-bytes", "100", "--report", "--out", "r", "--cost-mode", "calculate"}, audit,
			[]string{"Paths:[t]", "By:day", "Since:2026-01-01", "Until:2026-01-31", "Timezone:UTC", "Breakdown:true", "Strict:true", "Pricing:p.json",
				"Format:json", "CCUsage:daily", "Label:high", "MaxLineBytes:100", "Report:true", "ReportDir:r", "CostMode:calculate"}},
		{"audit", []string{"--format", "parquet", "--out", "o", "--partition-by", "day", "--force"}, audit,
			[]string{"Format:parquet", "Out:o", "PartitionBy:day", "Force:true"}},
		{"audit ab", []string{"--arm", "a=x", "--arm", "b=y", "--baseline", "b", "--allow-mixed", "--alpha", "0.1", "--confidence", "0.9",
			"--ccusage", "session", "--format", "json", "--max-line-bytes", "100", "--paired", "--pair-by", "task"}, ab,
			[]string{"ArmFlags:[a=x b=y]", "Baseline:b", "AllowMixed:true", "Alpha:0.1", "Confidence:0.9", "CCUsage:session", "Format:json",
				"MaxLineBytes:100", "Paired:true", "PairBy:task"}},
		{"audit ab", []string{"d", "--by-effort", "--json"}, ab, []string{"Paths:[d]", "ByEffort:true", "Format:json"}},
		{"detect", []string{"a.log", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdDetect(f, hook[detectOptions](g)) },
			[]string{"Logs:[a.log]", "JSON:true"}},
		{"diff", []string{"v1", "v2", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdDiff(f, hook[diffOptions](g)) }, []string{"Format:json"}},
		{"diff", []string{"v1", "v2", "--format", "markdown"}, func(f *Factory, g *any) *cobra.Command { return newCmdDiff(f, hook[diffOptions](g)) },
			[]string{"A:v1", "B:v2", "Format:markdown"}},
		{"effort", []string{"--repo", "r", "--census-only", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdEffort(f, hook[effortOptions](g)) },
			[]string{"Repo:r", "CensusOnly:true", "JSON:true"}},
		{"effort", []string{"d", "--pricing", "p.json", "--cost-mode", "calculate"}, func(f *Factory, g *any) *cobra.Command { return newCmdEffort(f, hook[effortOptions](g)) },
			[]string{"Paths:[d]", "Pricing:p.json", "CostMode:calculate"}},
		{"explore", []string{"a.log", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdExplore(f, hook[exploreOptions](g)) },
			[]string{"Logs:[a.log]", "JSON:true"}},
		{"evolve", []string{"a.log", "--apply", "--config", "c.toml", "--json", "--max-steps", "4", "--stall-bound", "1"},
			func(f *Factory, g *any) *cobra.Command { return newCmdEvolve(f, hook[evolveOptions](g)) },
			[]string{"Logs:[a.log]", "Apply:true", "ConfigPath:c.toml", "JSON:true", "MaxSteps:4", "StallBound:1"}},
		{"history", []string{"--json", "--limit", "5"}, func(f *Factory, g *any) *cobra.Command { return newCmdHistory(f, hook[historyOptions](g)) },
			[]string{"JSON:true", "Limit:5"}},
		{"init", []string{"d", "--force", "--json", "--ci", "github"}, func(f *Factory, g *any) *cobra.Command { return newCmdInit(f, hook[initOptions](g)) },
			[]string{"Dir:d", "Force:true", "JSON:true", "CI:github"}},
		{"nightly", []string{"--logs", "*.log", "--logs", "b/*.log", "--config", "c.toml", "--json", "--max-steps", "4", "--stall-bound", "1", "--apply", "--branch", "--declined", "tune/v0001-aa,tune/v0001-bb", "--declined", "tune/v0002-cc"},
			func(f *Factory, g *any) *cobra.Command { return newCmdNightly(f, hook[nightlyOptions](g)) },
			[]string{"Globs:[*.log b/*.log]", "ConfigPath:c.toml", "JSON:true", "MaxSteps:4", "StallBound:1", "Apply:true", "Branch:true", "Declined:[tune/v0001-aa,tune/v0001-bb tune/v0002-cc]"}},
		{"propose", []string{"a.log", "b.log", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdPropose(f, hook[proposeOptions](g)) },
			[]string{"Logs:[a.log b.log]", "JSON:true"}},
		{"repair", []string{"--abort", "--json"}, repair, []string{"Abort:true", "Resign:false", "JSON:true"}},
		{"repair", []string{"--resign", "--reason", "edited"}, repair, []string{"Abort:false", "Resign:true", "Reason:edited"}},
		{"replay", []string{"--weights", "w.toml", "--holdout", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdReplay(f, hook[replayOptions](g)) },
			[]string{"WeightsFile:w.toml", "Holdout:true", "JSON:true"}},
		{"report proposal", []string{"proposal", "p-1", "--out", "o", "--json"}, report, []string{"Kind:proposal", "Proposal:p-1", "OutDir:o", "JSON:true"}},
		{"report history", []string{"history", "a.log"}, report, []string{"Kind:history", "Paths:[a.log]", "OutDir:reports"}},
		{"report audit", []string{"audit", "--arm", "a=x", "--arm", "b=y", "--allow-mixed", "--pricing", "p.json", "--cost-mode", "display", "--repo", "r"}, report,
			[]string{"Kind:audit", "Arms:[a=x b=y]", "AllowMixed:true", "Pricing:p.json", "CostMode:display", "Repo:r"}},
		{"rollback", []string{"--to", "v0001", "--expect-serial", "2", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdRollback(f, hook[rollbackOptions](g)) },
			[]string{"To:v0001", "ExpectSerial:2", "JSON:true"}},
		{"score", []string{"--json", "--weights", "w.toml", "--history", "h.log", "--log", "t.log", "--task", "title", "--loops", "design,inner", "fix it"},
			func(f *Factory, g *any) *cobra.Command { return newCmdScore(f, hook[scoreOptions](g)) },
			[]string{"Prompt:fix it", "JSON:true", "WeightsFile:w.toml", "HistoryLog:h.log", "Log:t.log", "Task:title", "TaskSet:true", "Loops:[design inner]"}},
		{"score", []string{"--project-log", "fix it"}, func(f *Factory, g *any) *cobra.Command { return newCmdScore(f, hook[scoreOptions](g)) },
			[]string{"Prompt:fix it", "ProjectLog:true"}},
		{"score", []string{"--batch", "b.jsonl"}, func(f *Factory, g *any) *cobra.Command { return newCmdScore(f, hook[scoreOptions](g)) },
			[]string{"Batch:b.jsonl", "FromStdin:false"}},
		{"score", []string{"--log", "t.log", "--regression-of", "2026-11-02T00:00:00Z", "fix it"}, func(f *Factory, g *any) *cobra.Command { return newCmdScore(f, hook[scoreOptions](g)) },
			[]string{"Log:t.log", "RegressionOf:2026-11-02T00:00:00Z"}},
		{"score", []string{"--log", "t.log", "--regression-of-last", "src/x.go", "fix it"}, func(f *Factory, g *any) *cobra.Command { return newCmdScore(f, hook[scoreOptions](g)) },
			[]string{"Log:t.log", "RegressionOfLast:src/x.go"}},
		{"trace", []string{"a.log", "--last", "5", "--json", "--max-line-mb", "2", "--strict"}, trace,
			[]string{"Logs:[a.log]", "Last:5", "LastSet:true", "Format:json", "MaxLine:2", "Strict:true"}},
		{"trace", []string{"--format", "parquet", "--out", "o.parquet", "--force"}, trace, []string{"Format:parquet", "Out:o.parquet", "Force:true", "LastSet:false"}},
		{"verify", []string{"--json", "--base", "origin/main"}, func(f *Factory, g *any) *cobra.Command { return newCmdVerify(f, hook[verifyOptions](g)) }, []string{"JSON:true", "Base:origin/main"}},
		{"version", []string{"--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdVersion(f, hook[versionOptions](g)) }, []string{"JSON:true"}},
		{"watch", []string{"a.log", "--version", "v0002", "--config", "c.toml", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdWatch(f, hook[watchOptions](g)) },
			[]string{"Logs:[a.log]", "Version:v0002", "ConfigPath:c.toml", "JSON:true"}},
		{"weights show", []string{"v0001", "--json"}, func(f *Factory, g *any) *cobra.Command { return newCmdWeightsShow(f, hook[weightsShowOptions](g)) },
			[]string{"Ref:v0001", "JSON:true"}},
	}
}

// TestEveryCommandParsesItsFlagsThroughRunF walks the command tree: every runnable command has a case
// here, every flag it defines (its own, and those of a parent group other than tune's global ones) is
// given in at least one of its cases, and each case's options hold the values given. Nothing runs.
func TestEveryCommandParsesItsFlagsThroughRunF(t *testing.T) {
	cases := runFCases()
	covered := map[string]map[string]bool{}
	for _, c := range cases {
		f, _, _ := testFactory()
		f.WeightsDir, f.ReportsDir = "weights", "reports"
		var got any
		cmd := c.build(f, &got)
		cmd.SetArgs(c.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err != nil {
			t.Errorf("%s %v: %v", c.path, c.args, err)
			continue
		}
		if got == nil {
			t.Errorf("%s %v: runF was not called", c.path, c.args)
			continue
		}
		s := fmt.Sprintf("%+v", got)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s %v: options lack %q:\n%s", c.path, c.args, w, s)
			}
		}
		if covered[c.path] == nil {
			covered[c.path] = map[string]bool{}
		}
		leaf := cmd
		if sub, _, err := cmd.Find(c.args); err == nil {
			leaf = sub
		}
		leaf.Flags().Visit(func(fl *pflag.Flag) { covered[c.path][fl.Name] = true })
	}

	f, _, _ := testFactory()
	root := NewRootCmd(f)
	// --jq and --template are read by the root for every command with --json (jsonfilter_test.go)
	global := map[string]bool{"help": true, "jq": true, "template": true}
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) { global[fl.Name] = true })
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if !cmd.Runnable() || cmd.HasSubCommands() || cmd == root {
			return // a help topic, or a group (its own argument check is in args_test.go)
		}
		path := strings.TrimPrefix(cmd.CommandPath(), "tune ")
		if path == "help" || strings.HasPrefix(path, "completion ") {
			return // cobra's own commands, typed in typeHelpAndCompletion; they have no options struct
		}
		seen, ok := covered[path]
		if !ok {
			t.Errorf("tune %s has no runF case: add one to runFCases", path)
			return
		}
		var missing []string
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !global[fl.Name] && !seen[fl.Name] {
				missing = append(missing, "--"+fl.Name)
			}
		})
		if len(missing) > 0 {
			t.Errorf("tune %s: no runF case gives %s", path, strings.Join(missing, ", "))
		}
	}
	walk(root)
}
