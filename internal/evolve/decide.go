package evolve

import (
	"fmt"
	"strings"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// Rescore is a flagged task re-scored from its signals under the parent and the candidate weights.
type Rescore struct {
	MetaTimestamp  string       `json:"meta_timestamp"`
	Title          string       `json:"task"`
	Recorded       string       `json:"recorded_level"`
	ParentSum      weights.Half `json:"parent_sum"`
	ParentLevel    string       `json:"parent_level"`
	CandidateSum   weights.Half `json:"candidate_sum"`
	CandidateLevel string       `json:"candidate_level"`
	// ParentGap and CandidateGap are the distance from the sum to the upper edge of its bucket (how much
	// more it needs, plus a hair, to reach the next level); nil at L4.
	ParentGap    *weights.Half `json:"parent_gap"`
	CandidateGap *weights.Half `json:"candidate_gap"`
	// Moved is "up" (a higher level, or the same level closer to the next bucket), "same" or "down".
	Moved string `json:"moved"`
	// OutOfLowSide: the parent scores it L0/L1 and the candidate L2 or higher.
	OutOfLowSide bool `json:"out_of_low_side"`
}

func gap(w *weights.Weights, sum weights.Half) (weights.Level, *weights.Half) {
	lv, g, ok := w.Buckets.Gap(sum)
	if !ok {
		return lv, nil
	}
	return lv, &g
}

func rescore(f *Flagged, parent, cand *weights.Weights) Rescore {
	ps, cs := parent.Score(f.Fired), cand.Score(f.Fired)
	pl, pg := gap(parent, ps)
	cl, cg := gap(cand, cs)
	r := Rescore{MetaTimestamp: f.MetaTimestamp, Title: f.Title, Recorded: f.Level, ParentSum: weights.Half(ps),
		ParentLevel: pl.String(), CandidateSum: weights.Half(cs), CandidateLevel: cl.String(), ParentGap: pg, CandidateGap: cg,
		Moved: "same", OutOfLowSide: pl <= weights.L1 && cl >= weights.L2}
	switch {
	case cl > pl:
		r.Moved = "up"
	case cl < pl:
		r.Moved = "down"
	case pg != nil && cg != nil && *cg < *pg:
		r.Moved = "up"
	case pg != nil && cg != nil && *cg > *pg:
		r.Moved = "down"
	}
	return r
}

// motivatingUp says whether the flagged tasks move up: at least one moves up (a level, or closer to the
// next bucket) and none moves down. It is reported; the rules that decide are by level (liftedCount,
// movedDown) and by the witness.
func motivatingUp(rs []Rescore) bool {
	up := false
	for _, r := range rs {
		switch r.Moved {
		case "down":
			return false
		case "up":
			up = true
		}
	}
	return up
}

// liftedCount is how many flagged tasks the candidate lifts out of L0/L1 by level.
func liftedCount(rs []Rescore) int {
	n := 0
	for _, r := range rs {
		if r.OutOfLowSide {
			n++
		}
	}
	return n
}

// movedDown reports whether any flagged task drops a level.
func movedDown(rs []Rescore) bool {
	for _, r := range rs {
		if r.CandidateLevel < r.ParentLevel {
			return true
		}
	}
	return false
}

// ScenarioDelta is a scenario whose loss changed.
type ScenarioDelta struct {
	Name   string `json:"name"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

// Discordant is the exact sign test over the scenarios whose loss changed (McNemar exact on the
// discordant pairs). Verdict is "insufficient evidence" when even a unanimous result over this many
// scenarios could not reach Alpha.
type Discordant struct {
	Improved int    `json:"improved"`
	Worsened int    `json:"worsened"`
	P        Num    `json:"p"`
	MinP     Num    `json:"min_p"`
	Verdict  string `json:"verdict"`
}

func discordant(improved, worsened int) Discordant {
	d := Discordant{Improved: improved, Worsened: worsened, P: Num(stats.SignTest(improved, worsened)),
		MinP: Num(stats.SignTestMinP(improved + worsened))}
	switch {
	case !(float64(d.MinP) <= Alpha):
		d.Verdict = "insufficient evidence"
	case float64(d.P) <= Alpha:
		d.Verdict = "significant"
	default:
		d.Verdict = "not significant"
	}
	return d
}

// LOO is the leave-one-out stability of a decision: the decision re-taken with each scenario left out.
type LOO struct {
	Folds int `json:"folds"`
	Agree int `json:"agree"`
	// Support is Agree/Folds.
	Support Num `json:"support"`
	// Flips names the scenarios whose removal flips the decision.
	Flips []string `json:"flips"`
}

// Attempt is one measured change.
type Attempt struct {
	Change          Change          `json:"change"`
	SuiteLossBefore Num             `json:"suite_loss_before"`
	SuiteLossAfter  Num             `json:"suite_loss_after"`
	Worse           []ScenarioDelta `json:"worse"`
	Better          []ScenarioDelta `json:"better"`
	Motivating      []Rescore       `json:"motivating"`
	MotivatingUp    bool            `json:"motivating_up"`
	// Lifted is how many flagged tasks the candidate lifts out of L0/L1 by level.
	Lifted int `json:"lifted"`
	// WitnessBefore/After are the suite loss plus the points the flagged tasks still lack to leave the
	// low side, under the parent and the candidate: the attempt is kept only when it falls.
	WitnessBefore Num `json:"witness_before"`
	WitnessAfter  Num `json:"witness_after"`
	// AddedLoss is the loss the change adds on the fixtures that get worse (levels × cost, summed) and
	// HistoryGain its expected gain summed over the history's tasks (the loss rule's total): a change
	// that adds loss on the fixtures passes the suite only when HistoryGain is larger
	// (docs/decisions.md#loss-rule).
	AddedLoss   int  `json:"fixtures_added_loss"`
	HistoryGain Num  `json:"history_gain"`
	Accepted    bool `json:"accepted"`
	// Decision is accept (the full step), halve (the half step) or revert (rejected).
	Decision   weights.Decision `json:"decision"`
	Reason     string           `json:"reason"`
	Discordant Discordant       `json:"discordant"`
	LOO        LOO              `json:"loo"`
	// Holdout is the frozen split's veto (read only when every other rule passed); Parity the price on
	// the parity prompts (nil without a parity set).
	Holdout Holdout      `json:"holdout"`
	Parity  *ParityShift `json:"parity"`
}

// judge holds what evaluate needs besides the change.
type judge struct {
	parent  *weights.Weights
	suite   *Suite
	holdout *Suite
	// holdoutPriced: the holdout's added loss is paid like the suite's (HoldoutPriced), not a veto.
	holdoutPriced bool
	parity        *Parity
	parityBase    *weights.Weights
	budget        float64
	before        []int
	flagged       []Flagged
	requireLift   bool
	// excess is the change's estimated excess regression rate, credited by the parity price; tasks the
	// accumulated population the history credit is computed on.
	excess excessEstimate
	tasks  []screenCell
}

// evaluate measures one change against the parent (docs/decisions.md#acceptance). It is kept when the
// suite loss does not rise, no scenario gets worse, no flagged task drops a level, the witness falls,
// (for a single step) at least one flagged task leaves L0/L1 by level, the parity price is within
// budget, and — read last — the holdout loss does not rise (the veto), or under HoldoutPriced the loss
// it adds is paid for with the suite's.
func evaluate(c Change, half bool, j *judge) (Attempt, weights.Weights) {
	parent, suite, before := j.parent, j.suite, j.before
	cand := c.Apply(*parent)
	after := suite.Losses(&cand)
	a := Attempt{Change: c, Worse: []ScenarioDelta{}, Better: []ScenarioDelta{}, Motivating: []Rescore{},
		Holdout: Holdout{Scenarios: j.holdout.Len(), Verdict: "not read"}}
	sumB, sumA := 0, 0
	for i := range before {
		sumB += before[i]
		sumA += after[i]
		d := ScenarioDelta{Name: suite.Scenarios[i].Name, Before: before[i], After: after[i]}
		switch {
		case after[i] > before[i]:
			a.Worse = append(a.Worse, d)
		case after[i] < before[i]:
			a.Better = append(a.Better, d)
		}
	}
	if n := len(before); n > 0 {
		a.SuiteLossBefore, a.SuiteLossAfter = Num(float64(sumB)/float64(n)), Num(float64(sumA)/float64(n))
	}
	for i := range j.flagged {
		a.Motivating = append(a.Motivating, rescore(&j.flagged[i], parent, &cand))
	}
	a.MotivatingUp = motivatingUp(a.Motivating)
	a.Lifted = liftedCount(a.Motivating)
	a.WitnessBefore = witness(a.SuiteLossBefore, j.flagged, parent)
	a.WitnessAfter = witness(a.SuiteLossAfter, j.flagged, &cand)
	hist := lossGain(c, j.excess, parent, j.tasks, nil)
	gain := hist.total(parent)
	added := addedLoss(before, after)
	paid := suitePaid(added, gain)
	a.AddedLoss, a.HistoryGain = added, Num(gain)
	var why []string
	if sumA > sumB && !paid {
		why = append(why, fmt.Sprintf("suite loss rose %.3f → %.3f", float64(a.SuiteLossBefore), float64(a.SuiteLossAfter)))
	}
	if len(a.Worse) > 0 && !paid {
		names := make([]string, len(a.Worse))
		for i, d := range a.Worse {
			names[i] = fmt.Sprintf("%s %d→%d", d.Name, d.Before, d.After)
		}
		why = append(why, "scenario loss rose: "+strings.Join(names, ", ")+unpaid(added, gain, hist.Tasks))
	}
	suiteWhy := len(why)
	if movedDown(a.Motivating) {
		why = append(why, "a flagged task drops a level")
	}
	if !(a.WitnessAfter < a.WitnessBefore) {
		why = append(why, fmt.Sprintf("the witness does not fall (%.3f → %.3f)", float64(a.WitnessBefore), float64(a.WitnessAfter)))
	}
	if j.requireLift && a.Lifted == 0 {
		why = append(why, "no flagged task leaves L0/L1")
	}
	if j.parity.Len() > 0 {
		ps := PriceParity(j.parity, j.parityBase, &cand, j.budget, j.excess.excess, float64(hist.Credit))
		a.Parity = &ps
		if ps.OverBudget {
			why = append(why, fmt.Sprintf("parity price: net price %.3f (too-high cost %.3f, credit %.3f) > budget %.3f",
				float64(ps.NetPrice), float64(ps.TooHighCost), float64(ps.Credit+ps.HistoryCredit), j.budget))
		}
	}
	othersOK := len(why) == suiteWhy // the rules that do not depend on the fixtures
	holdoutAdded := 0                // what the leave-one-out folds charge with the suite's added loss
	if len(why) == 0 && j.holdout.Len() > 0 {
		// The holdout is read only when every other rule passed, and only to refuse.
		a.Holdout = readHoldout(j.holdout, parent, &cand)
		a.Holdout.Priced = j.holdoutPriced
		switch {
		case j.holdoutPriced:
			// Decided as the suite is: every scenario made worse adds its loss, which the history's gain
			// must pay together with the suite's (docs/decisions.md#the-holdout-priced-on-request).
			holdoutAdded = a.Holdout.AddedLoss
			a.Holdout.Paid = holdoutAdded > 0 && suitePaid(added+holdoutAdded, gain)
			if holdoutAdded > 0 && !a.Holdout.Paid {
				why = append(why, fmt.Sprintf("holdout loss not paid: %s%s", strings.Join(a.Holdout.Worse, ", "), unpaid(added+holdoutAdded, gain, hist.Tasks)))
			}
		case a.Holdout.Verdict == "worse":
			why = append(why, fmt.Sprintf("holdout veto: holdout loss rose %.3f → %.3f", float64(*a.Holdout.LossBefore), float64(*a.Holdout.LossAfter)))
		}
	}
	a.Accepted = len(why) == 0
	rules := "suite loss does not rise, no scenario worse, the witness falls"
	switch {
	case a.Holdout.Paid:
		rules = fmt.Sprintf("the loss added on the fixtures (%d) and on the holdout (%d) is paid for by the expected gain on the history's %d task(s) (%.1f), the witness falls",
			added, a.Holdout.AddedLoss, hist.Tasks, gain)
	case added > 0:
		rules = fmt.Sprintf("the loss added on the fixtures (%d) is paid for by the expected gain on the history's %d task(s) (%.1f), the witness falls", added, hist.Tasks, gain)
	}
	lift := ""
	if a.Lifted > 0 {
		lift = fmt.Sprintf(", %d flagged task(s) leave L0/L1", a.Lifted)
	}
	switch {
	case !a.Accepted:
		a.Decision, a.Reason = weights.DecisionRevert, strings.Join(why, "; ")
	case half:
		a.Decision, a.Reason = weights.DecisionHalve, "half step: "+rules+lift
	default:
		a.Decision, a.Reason = weights.DecisionAccept, rules+lift
	}
	a.Discordant = discordant(len(a.Better), len(a.Worse))
	// The rules that do not depend on the fixtures are a constant for the leave-one-out folds; a veto
	// is one of them, a priced holdout's loss is paid with the suite's.
	vetoed := !j.holdoutPriced && a.Holdout.Verdict == "worse"
	othersOK = othersOK && !vetoed
	a.LOO = leaveOneOut(before, after, othersOK, holdoutAdded, a.Accepted, suite, gain)
	return a, cand
}

// addedLoss is the loss a candidate adds on the fixtures that get worse (levels × cost, summed; the
// ones that get better do not offset it).
func addedLoss(before, after []int) int {
	added := 0
	for i := range before {
		if after[i] > before[i] {
			added += after[i] - before[i]
		}
	}
	return added
}

// suitePaid is the suite rule under the stated losses (docs/decisions.md#loss-rule): a candidate that
// adds no loss on any fixture passes it; one that adds some passes only when its expected gain on the
// history's tasks, in the same units, is larger.
func suitePaid(added int, gain float64) bool {
	return added == 0 || gain > float64(added)
}

// unpaid says, for a refusal, what the history's expected gain would have had to pay.
func unpaid(added int, gain float64, tasks int) string {
	if tasks == 0 {
		return ""
	}
	return fmt.Sprintf(" (adds %d, more than the expected gain %.1f on the history's %d task(s))", added, gain, tasks)
}

// leaveOneOut re-takes the suite part of the decision with each scenario left out. The other rules
// (othersOK) do not depend on the fixtures, so only the suite rules can flip; holdoutAdded is the loss
// a priced holdout adds, paid together with the suite's (0 under the veto, which is one of the others).
func leaveOneOut(before, after []int, othersOK bool, holdoutAdded int, accepted bool, suite *Suite, gain float64) LOO {
	l := LOO{Folds: len(before), Flips: []string{}}
	added := addedLoss(before, after)
	for i := range before {
		a := added
		if after[i] > before[i] {
			a -= after[i] - before[i]
		}
		// With no fixture worse the suite loss cannot rise: the suite part is suitePaid alone.
		ok := othersOK && suitePaid(a+holdoutAdded, gain)
		if ok == accepted {
			l.Agree++
		} else {
			l.Flips = append(l.Flips, suite.Scenarios[i].Name)
		}
	}
	if l.Folds > 0 {
		l.Support = Num(float64(l.Agree) / float64(l.Folds))
	}
	return l
}

// Holdout is the frozen split's verdict. It is read only after the decision is taken (never for it), and
// every read — one scoring of the split under one weights vector — is counted.
type Holdout struct {
	Scenarios  int    `json:"scenarios"`
	Reads      int    `json:"reads"`
	LossBefore *Num   `json:"loss_before"`
	LossAfter  *Num   `json:"loss_after"`
	Verdict    string `json:"verdict"` // not read | better | no change | worse
	// Worse names the holdout scenarios the candidate makes worse, with the level each got before and
	// after ("holdout-L2-ambiguous L2 → L3"): what a human reads when the holdout holds a change
	// (docs/escalation.md, "A change the holdout holds"); AddedLoss is the loss it adds on them (levels
	// × cost, summed, as the suite's).
	Worse     []string `json:"worse,omitempty"`
	AddedLoss int      `json:"added_loss,omitempty"`
	// Priced says it was read under HoldoutPriced (every scenario made worse adds its loss, whatever the
	// total did), and Paid that the history's expected gain paid for that loss together with the suite's,
	// so the holdout did not refuse the change. A priced holdout that refuses is an ordinary refusal,
	// which more evidence can lift; only the veto holds a change (HeldBy).
	Priced bool `json:"priced,omitempty"`
	Paid   bool `json:"paid,omitempty"`
}

// HoldoutRule is how a change that raises the frozen holdout's loss is decided
// (docs/decisions.md#the-holdout-priced-on-request).
type HoldoutRule string

const (
	// HoldoutVeto: the holdout's loss must not rise, whatever the evidence (issue 11; the default).
	HoldoutVeto HoldoutRule = "veto"
	// HoldoutPriced: the loss it adds is paid by the history's expected gain together with the suite's
	// (the suite's rule, docs/decisions.md#loss-rule), a project's reviewed choice in tune.toml.
	HoldoutPriced HoldoutRule = "priced"
)

func readHoldout(h *Suite, parent, cand *weights.Weights) Holdout {
	out := Holdout{Scenarios: h.Len(), Verdict: "not read"}
	if h.Len() == 0 {
		return out
	}
	before, after := h.Score(parent), h.Score(cand)
	b, a := before.Loss, after.Loss
	for i, r := range after.Rows {
		if was := before.Rows[i]; r.Loss > was.Loss {
			out.Worse = append(out.Worse, fmt.Sprintf("%s %s → %s", r.Name, was.Got, r.Got))
			out.AddedLoss += r.Loss - was.Loss
		}
	}
	out.Reads = 2
	out.LossBefore, out.LossAfter = &b, &a
	switch {
	case a < b:
		out.Verdict = "better"
	case a > b:
		out.Verdict = "worse"
	default:
		out.Verdict = "no change"
	}
	return out
}
