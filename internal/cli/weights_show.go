package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// NewCmdWeights builds the `tune weights` group.
func NewCmdWeights(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "weights <command>",
		Short: "Inspect weights versions",
		Long:  "Inspect the versions in the weights store. See also tune history, tune diff, tune verify.",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCmdWeightsShow(f, nil))
	return cmd
}

type weightsShowOptions struct {
	IO         *IOStreams
	WeightsDir string
	Ref        string // version, "active" or a proposal; default active
	JSON       bool
}

func newCmdWeightsShow(f *Factory, runF func(*weightsShowOptions) error) *cobra.Command {
	opts := &weightsShowOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show [VERSION]",
		Short: "Print one weights version: signal weights, bucket edges, cost matrix",
		Long: `Print a weights version: the nine signal weights, the bucket edges that cut a raw score into
L0..L4 (inclusive upper edges; L4 is everything above L3) and the replay cost matrix.

VERSION is v0002, 2, "active" (the default: the version the evolution log made active), or a
proposal file or id (its candidate weights).

--json prints {"version", "signals": {name: weight}, "buckets": {"L0".."L3": edge}, "cost": {...}}
plus parent, active, created, reason and evidence.`,
		Example: `  tune weights show
  tune weights show v0001
  tune weights show --json | jq '.signals.ambiguous'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir = f.WeightsDir
			opts.Ref = "active"
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return weightsShowRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the version as JSON")
	return cmd
}

// weightsDoc is the JSON form of a version. Signals, buckets and cost keep the table order of the TOML
// file (store.NumberMap), the same shape as a proposal's candidate.
type weightsDoc struct {
	Version  string          `json:"version"`
	Parent   string          `json:"parent,omitempty"`
	Active   bool            `json:"active"`
	Created  *time.Time      `json:"created,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Evidence string          `json:"evidence,omitempty"`
	Signals  store.NumberMap `json:"signals"`
	Buckets  store.NumberMap `json:"buckets"`
	Cost     store.NumberMap `json:"cost"`
}

func newWeightsDoc(ref *app.WeightsRef) weightsDoc {
	w := &ref.Weights
	d := weightsDoc{Version: ref.Label, Active: ref.Active, Reason: w.Reason, Evidence: w.Evidence}
	if w.Parent > 0 {
		d.Parent = weights.VersionName(w.Parent)
	}
	if !w.Created.IsZero() {
		t := w.Created.UTC()
		d.Created = &t
	}
	d.Signals, d.Buckets, d.Cost = store.WeightsJSON(w)
	return d
}

func weightsShowRun(opts *weightsShowOptions) error {
	ref, err := app.ResolveWeightsRef(opts.WeightsDir, opts.Ref)
	if err != nil {
		return err
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, newWeightsDoc(ref))
	}
	printWeights(opts.IO.Out, ref)
	return nil
}

func printWeights(out io.Writer, ref *app.WeightsRef) {
	w := &ref.Weights
	head := ref.Label
	if w.Parent > 0 {
		head += " (parent " + weights.VersionName(w.Parent) + ")"
	}
	if ref.Active {
		head += ", active"
	}
	fmt.Fprintln(out, head)
	if w.Reason != "" {
		fmt.Fprintf(out, "reason:   %s\n", w.Reason)
	}
	if w.Evidence != "" {
		fmt.Fprintf(out, "evidence: %s\n", w.Evidence)
	}
	fmt.Fprintln(out, "\nsignals")
	for _, s := range weights.Signals() {
		fmt.Fprintf(out, "  %-24s %5s\n", s.String(), w.Signals[s].String())
	}
	fmt.Fprintln(out, "\nbuckets (a raw score up to the edge gets the level; above L3 is L4)")
	for i, e := range w.Buckets.Edges {
		fmt.Fprintf(out, "  %-24s %5s\n", weights.Level(i).Label(), e.Plain())
	}
	fmt.Fprintln(out, "\ncost (replay, per level missed)")
	fmt.Fprintf(out, "  %-24s %5d\n  %-24s %5d\n  %-24s %5d\n", "too_low", w.Cost.TooLow, "too_high", w.Cost.TooHigh, "other_item", w.Cost.OtherItem)
}
