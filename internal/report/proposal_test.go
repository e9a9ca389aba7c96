package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
)

func TestProposalGolden(t *testing.T) {
	files, err := RenderProposal(sampleProposal())
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"proposal-p-4f1c2a9be07d.md", "proposal-p-4f1c2a9be07d-decision.svg", "proposal-p-4f1c2a9be07d-loss.svg"}
	if len(files) != len(wantNames) {
		t.Fatalf("got %d files, want %v", len(files), wantNames)
	}
	for i, f := range files {
		if f.Name != wantNames[i] {
			t.Errorf("file %d is %s, want %s", i, f.Name, wantNames[i])
		}
		testutil.Golden(t, "proposal/"+f.Name, f.Data)
	}
	md := string(files[0].Data)
	for _, s := range []string{"(proposal-p-4f1c2a9be07d-loss.svg)", "(proposal-p-4f1c2a9be07d-decision.svg)", "**Decision: halve** — ambiguous +0.5", "| **ambiguous**          |   2 | 2.5 | +0.5 |"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func TestProposalRedactsTitles(t *testing.T) {
	in := sampleProposal()
	in.Reason = "seen with password=hunter2"
	files, err := RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, secret := range []string{secretKey, "hunter2"} {
			if bytes.Contains(f.Data, []byte(secret)) {
				t.Errorf("%s contains the secret %q", f.Name, secret)
			}
		}
	}
	md := string(files[0].Data)
	if !strings.Contains(md, "rotate the deploy key [REDACTED] in ci/secrets.yaml") {
		t.Errorf("redacted title not shown:\n%s", md)
	}
	if !strings.Contains(md, "2 secret-looking strings were redacted") {
		t.Errorf("redaction footnote missing or wrong")
	}
}

func TestProposalMissingSections(t *testing.T) {
	in := ProposalReport{ID: "p-000000000000", Parent: 1, Decision: "none", NoPattern: "no consistent pattern",
		Flagged: sampleProposal().Flagged, Before: referenceWeights(), After: referenceWeights()}
	files, err := RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Errorf("no replay should mean no chart, got %d files", len(files))
	}
	md := string(files[0].Data)
	for _, s := range []string{"No change proposed: no consistent pattern", "## Window\n\n_Not recorded", "## Attempts\n\n_None", "Nothing was kept: the weights stay those of v0001.", "**Decision: none** — no change; nothing was replayed."} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
	testutil.Golden(t, "proposal/no-pattern.md", files[0].Data)
}

// An evolve chain: attempts of several steps get a step column and the headline names every accepted change.
func TestProposalChain(t *testing.T) {
	in := sampleProposal()
	for i := range in.Attempts {
		in.Attempts[i].Step = 1
	}
	in.Attempts = append(in.Attempts, Attempt{Step: 2, Change: "layer-crossings +1", Decision: "accept", SuiteLossBefore: 0.6, SuiteLossAfter: 0.6, MotivatingUp: 1, Motivating: 1})
	files, err := RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[0].Data)
	for _, s := range []string{"— ambiguous +0.5, then layer-crossings +1 (", "| step | # | change", "|    2 | 3 | layer-crossings +1"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

// A proposal that keeps nothing says the parent's loss stands and what the reverted attempts measured;
// its headline said "Suite loss 1 → 1" over an attempts table at 1 → 0.8.
func TestProposalRevertHeadline(t *testing.T) {
	in := sampleProposal()
	in.Decision = "revert"
	in.SuiteLossAfter = in.SuiteLossBefore
	for i := range in.Attempts {
		in.Attempts[i].Decision = "revert"
	}
	files, err := RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[0].Data)
	// Nothing kept: no candidate is named anywhere, the parent stays, and no before/after chart of two
	// equal sides is drawn.
	for _, want := range []string{
		"**Decision: revert** — no change kept; v0003 stays. Suite loss 1 (reverted: 0.8, 0.6).",
		`other checked item wrong: +1). Nothing was kept, so "after" is v0003 too; what the reverted attempts measured is under Attempts.`,
		"## Weight diff\n\nNothing was kept: the weights stay those of v0003.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "→ candidate") || strings.Contains(md, "(candidate)") {
		t.Errorf("a report that keeps nothing names a candidate:\n%s", md)
	}
	if len(files) != 1 {
		t.Errorf("files %d, want the Markdown alone", len(files))
	}
}

// A report lists the most recent MaxFlaggedListed flagged tasks, numbered as in the full list, and says
// how many earlier ones it leaves to tune detect: a year of evidence holds a thousand or more.
func TestProposalListsTheMostRecentFlaggedTasks(t *testing.T) {
	in := ProposalReport{ID: "p-000000000000", Parent: 1, Decision: "none", Before: referenceWeights(), After: referenceWeights()}
	const n = MaxFlaggedListed + 150
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		// Two logs, each in file order: the second log's tasks are the older ones.
		at := start.Add(time.Duration((i+n/2)%n) * time.Hour)
		in.Flagged = append(in.Flagged, FlaggedTask{MetaTimestamp: at.Format(time.RFC3339), Title: fmt.Sprintf("task %d", i), Level: "L1",
			Source: fmt.Sprintf("log%d", i*2/n), Evidence: []string{"regression_followed"}})
	}
	files, err := RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[0].Data)
	rows := 0
	for _, l := range strings.Split(md, "\n") {
		if strings.Contains(l, "| regression_followed ") {
			rows++
		}
	}
	newest, oldestListed := fmt.Sprintf("| task %d ", n/2-1), fmt.Sprintf("| task %d ", n/2-MaxFlaggedListed)
	if rows != MaxFlaggedListed || !strings.Contains(md, newest) || !strings.Contains(md, oldestListed) ||
		strings.Contains(md, fmt.Sprintf("| task %d ", n/2-MaxFlaggedListed-1)) || strings.Contains(md, "| task 0 ") {
		t.Errorf("%d rows listed, want the %d most recent (tasks %d…%d and not %d)", rows, MaxFlaggedListed, n/2-MaxFlaggedListed, n/2-1, n/2-MaxFlaggedListed-1)
	}
	if want := fmt.Sprintf("_The %d most recent of %d flagged tasks; `tune detect` lists the %d earlier ones._", MaxFlaggedListed, n, n-MaxFlaggedListed); !strings.Contains(md, want) {
		t.Errorf("report lacks %q", want)
	}
}
