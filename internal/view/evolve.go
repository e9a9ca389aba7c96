package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
)

// Propose prints tune propose: the detection, every attempt, the decision and what was written.
func Propose(w io.Writer, rep *app.ProposeResult) error {
	if err := Detection(w, rep.Detection, rep.Logs, NewTails(rep.Tails)); err != nil {
		return err
	}
	if len(rep.Attempts) > 0 {
		termtable.Fprintln(w, "attempts:")
		if err := attemptsTable(w, rep.Attempts, nil); err != nil {
			return err
		}
	}
	termtable.Fprintf(w, "decision: %s, parent %s; suite loss %s\n", rep.Decision, rep.Parent, evolve.LossSummary(rep.Decision,
		float64(rep.SuiteLossBefore), float64(rep.SuiteLossAfter), evolve.TriedLosses(rep.Attempts), fmtLoss3))
	if rep.Drift != nil {
		termtable.Fprintf(w, "escalated: %s; see %s\n", rep.Drift.Reason, app.EscalationDoc)
	}
	if len(rep.DriftHeld) > 0 {
		termtable.Fprintf(w, "held: %s\n", evolve.HeldLine(rep.DriftHeld))
	}
	if len(rep.Lifted) > 0 {
		termtable.Fprintf(w, "lifted out of the low side: %s\n", strings.Join(rep.Lifted, ", "))
	}
	if rep.Holdout.Scenarios > 0 {
		if rep.Holdout.Reads > 0 {
			termtable.Fprintf(w, "holdout: %s (%.3f → %.3f over %d scenarios; %d reads)\n", rep.Holdout.Verdict,
				float64(*rep.Holdout.LossBefore), float64(*rep.Holdout.LossAfter), rep.Holdout.Scenarios, rep.Holdout.Reads)
		} else {
			termtable.Fprintf(w, "holdout: not read (nothing accepted; 0 reads)\n")
		}
	}
	if len(rep.HoldoutPaid) > 0 {
		termtable.Fprintf(w, "holdout paid: %s\n", app.HoldoutPaidLine(rep.HoldoutPaid))
	}
	if rep.ProposalFile != nil {
		state := "written"
		if !rep.Created {
			state = "unchanged (same proposal already pending)"
		}
		termtable.Fprintf(w, "proposal %s: %s %s\n", rep.ProposalID, Path(*rep.ProposalFile), state)
	}
	for _, r := range rep.Reports {
		termtable.Fprintf(w, "report: %s\n", Path(r))
	}
	return nil
}

// attemptsTable lists measured changes with their numbers; labels name the rows ("2.1": step 2, its
// first attempt), nil numbers them 1, 2, ….
func attemptsTable(w io.Writer, attempts []evolve.Attempt, labels []string) error {
	t := termtable.New(w, "#", "Change", "Suite loss", "Worse", "Flagged moved up", "Lifted", "Parity", "Sign test", "LOO", "Decision", "Reason").
		Key("Change", "Decision").Shrink("Worse", "Sign test", "LOO", "Reason").Optional("LOO", "Sign test", "Worse", "Flagged moved up", "Parity")
	for i, a := range attempts {
		up := 0
		for _, m := range a.Motivating {
			if m.Moved == "up" {
				up++
			}
		}
		worse := make([]string, len(a.Worse))
		for j, d := range a.Worse {
			worse[j] = fmt.Sprintf("%s %d→%d", d.Name, d.Before, d.After)
		}
		sign := fmt.Sprintf("+%d/-%d %s", a.Discordant.Improved, a.Discordant.Worsened, a.Discordant.Verdict)
		loo := fmt.Sprintf("%d/%d", a.LOO.Agree, a.LOO.Folds)
		if len(a.LOO.Flips) > 0 {
			loo += " flips: " + strings.Join(a.LOO.Flips, ",")
		}
		label := fmt.Sprint(i + 1)
		if labels != nil {
			label = labels[i]
		}
		if err := t.Append(label, a.Change.String(),
			fmt.Sprintf("%.3f → %.3f", float64(a.SuiteLossBefore), float64(a.SuiteLossAfter)), dash(strings.Join(worse, ", ")),
			fmt.Sprintf("%d/%d", up, len(a.Motivating)), fmt.Sprint(a.Lifted), parityCell(a.Parity), sign, loo, string(a.Decision), a.Reason); err != nil {
			return err
		}
	}
	return t.Render()
}

// parityCell is an attempt's parity price: prompts moved up and down, and the too-high cost against the
// budget ("—" when the attempt was not priced).
func parityCell(p *evolve.ParityShift) string {
	if p == nil || p.Prompts == 0 {
		return "—"
	}
	up, down := 0, 0
	for l := range p.Up {
		up += p.Up[l]
		down += p.Down[l]
	}
	cmp := "≤"
	if p.OverBudget {
		cmp = ">"
	}
	// The net price: the levels raised less the credit for the regressions avoided
	// (docs/decisions.md#parity-price).
	return fmt.Sprintf("↑%d ↓%d, %.3f %s %.3f", up, down, float64(p.NetPrice), cmp, float64(p.Budget))
}

// Evolve prints tune evolve and tune nightly: the watch, the outcome, the steps and their attempts, what
// was written and, on an escalation, what a human does next.
func Evolve(w io.Writer, out *app.EvolveResult) error {
	if r := out.Watch; r != nil {
		termtable.Fprintf(w, "watch: %s (parent %s, %s) is %s — %s\n", r.Version, r.Parent, strings.Join(r.Changes, ", "), strings.ToUpper(r.Verdict), r.Reason)
		switch {
		case r.Proposal != "":
			termtable.Fprintf(w, "watch: rollback proposal %s awaits review (tune apply %s)\n", r.Proposal, r.Proposal)
		case r.ProposalNote != "":
			termtable.Fprintf(w, "watch: %s\n", r.ProposalNote)
		}
	} else if out.WatchNote != "" {
		termtable.Fprintf(w, "watch: %s\n", out.WatchNote)
	}
	termtable.Fprintf(w, "outcome: %s — %s\n", out.Outcome, out.Reason)
	if len(out.Held) > 0 {
		termtable.Fprintf(w, "held: %s\n", app.HeldLine(out.Held))
	}
	if len(out.DriftHeld) > 0 {
		termtable.Fprintf(w, "held: %s\n", evolve.HeldLine(out.DriftHeld))
	}
	if len(out.HoldoutPaid) > 0 {
		termtable.Fprintf(w, "holdout paid: %s\n", app.HoldoutPaidLine(out.HoldoutPaid))
	}
	if out.Loop != nil && out.Loop.Detection != nil {
		if err := Evidence(w, out.Loop.Detection); err != nil {
			return err
		}
	}
	if len(out.Steps) > 0 {
		t := termtable.New(w, "Step", "Change", "Decision", "Suite loss", "Witness", "Progress", "Unresolved", "Lifted").
			Key("Change", "Decision").Optional("Witness", "Lifted", "Progress", "Unresolved")
		for _, s := range out.Steps {
			change := "—"
			if c := s.Named(); c != nil {
				change = c.String()
			}
			if err := t.Append(fmt.Sprint(s.N), change, string(s.Decision),
				evolve.LossSummary(s.Decision, float64(s.SuiteLossBefore), float64(s.SuiteLossAfter), evolve.TriedLosses(s.Attempts), fmtLoss3),
				fmt.Sprintf("%.3f → %.3f", float64(s.WitnessBefore), float64(s.WitnessAfter)),
				yesNo(s.Progress), fmt.Sprint(s.Unresolved), fmt.Sprint(len(s.Lifted))); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		// Every measured attempt with its numbers, also the reverted ones the step table sums up.
		var attempts []evolve.Attempt
		var labels []string
		for _, s := range out.Steps {
			for i, a := range s.Attempts {
				attempts = append(attempts, a)
				labels = append(labels, fmt.Sprintf("%d.%d", s.N, i+1))
			}
		}
		if len(attempts) > 0 {
			termtable.Fprintln(w, "attempts:")
			if err := attemptsTable(w, attempts, labels); err != nil {
				return err
			}
		}
	}
	if out.Refused != "" {
		termtable.Fprintf(w, "refused: %s\n", out.Refused)
	}
	if out.Drift != nil {
		termtable.Fprintf(w, "drift bound: %s\n", out.Drift.Reason)
	}
	// A --branch night's files are on its branch, not in the work tree (app.EvolveResult.FilesOn).
	onBranch := ""
	if out.FilesOn != "" {
		onBranch = " on branch " + out.FilesOn
	}
	if p := out.Proposal; p != nil {
		switch {
		case p.File == "":
			termtable.Fprintf(w, "proposal %s (%s, parent %s): not committed (--branch commits only a change to review, once)\n", p.ID, p.Decision, out.Parent)
		case !p.Created:
			termtable.Fprintf(w, "proposal %s (%s, parent %s): %s unchanged (same proposal already pending)\n", p.ID, p.Decision, out.Parent, Path(p.File))
		case onBranch != "":
			// on the branch, whether this night committed it or the branch already held it (the branch
			// line says which)
			termtable.Fprintf(w, "proposal %s (%s, parent %s): %s%s\n", p.ID, p.Decision, out.Parent, Path(p.File), onBranch)
		default:
			termtable.Fprintf(w, "proposal %s (%s, parent %s): %s written\n", p.ID, p.Decision, out.Parent, Path(p.File))
		}
	}
	if out.Applied != nil {
		termtable.Fprintf(w, "applied: weights %s is now active\n", *out.Applied)
	}
	for _, r := range out.Reports {
		termtable.Fprintf(w, "report: %s%s\n", Path(r), onBranch)
	}
	if out.StateDump != nil {
		termtable.Fprintf(w, "state dump: %s\n", Path(*out.StateDump))
		termtable.Fprintf(w, "escalated: a human decides next — read the state dump, then follow %s\n", app.EscalationDoc)
	}
	return nil
}

// fmtLoss3 prints a suite loss as the text tables do.
func fmtLoss3(l float64) string { return fmt.Sprintf("%.3f", l) }
