package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/tools/genlive"
)

// TestADeclinedChangeIsNotProposedAgain plays the pull-request loop of the strong planted regime with a
// reviewer who closes the first pull request unmerged (their no), the recipe then passing its branch as
// Declined every night (docs/nightly.md, "Saying no"). On that version no later night leaves the declined
// branch for review, nor a change that moves a signal it moved (a no covers the signal, whatever the
// step), nor lists it in supersedes (its request is closed already); every night names it in Declined.
// With a second planted effect (seed 20), that effect's change is proposed while the first is declined.
// When the reviewer reopens the request (the recipe no longer passes it), a later night proposes it again
// under the same branch name. Before, the night kept proposing the declined change: the recipes could only
// stay silent, and no other change could be proposed while the evidence preferred it.
func TestADeclinedChangeIsNotProposedAgain(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, c := range []struct {
		seed    uint64
		effects int // planted signals: with two, the second one's change is proposed while the first is declined
	}{{3, 1}, {4, 1}, {20, 2}} {
		p := playDeclined(t, c.seed, c.effects)
		t.Logf("seed %d, %d effect(s): %s (%s) named declined on %d night(s); proposed instead: %q", c.seed, c.effects, p.declined, p.change, p.named, p.other)
		if p.declined == "" || p.named < 3 {
			t.Fatalf("seed %d, %d effect(s): the evidence never preferred the declined change on 3 nights (declined %q, named %d): the test tests nothing", c.seed, c.effects, p.declined, p.named)
		}
		if !p.reproposed {
			t.Errorf("seed %d, %d effect(s): reopened, the declined %s was never proposed again", c.seed, c.effects, p.declined)
		}
		if c.effects > 1 && p.other == "" {
			t.Errorf("seed %d, %d effects: nothing was proposed while the first change was declined", c.seed, c.effects)
		}
	}
	if os.Getenv("TUNE_HARNESS") != "full" {
		return
	}
	// The measured run (docs/decisions.md#a-declined-change-is-refused-on-its-version): how often a project
	// with two planted effects gets its second change proposed while the first is declined.
	declined, other, again := 0, 0, 0
	for seed := uint64(1); seed <= 30; seed++ {
		p := playDeclined(t, seed, 2)
		if p.declined == "" {
			continue
		}
		declined++
		if p.other != "" {
			other++
		}
		if p.reproposed {
			again++
		}
		t.Logf("seed %d: declined %s (%s); proposed instead %q; proposed again after the reopen %v", seed, p.declined, p.change, p.other, p.reproposed)
	}
	t.Logf("two effects, 30 sequences: a change declined in %d; another proposed while declined in %d; proposed again within the nights left after the reopen in %d", declined, other, again)
}

// declinedPlay is what playDeclined saw: the declined branch and its change, the nights that named it
// declined, whether it was proposed again once reopened, and the change proposed while it was declined.
type declinedPlay struct {
	declined, change, other string
	named                   int
	reproposed              bool
}

// playDeclined plays the nights of TestADeclinedChangeIsNotProposedAgain: one log of the strong planted
// regime with effects planted signals.
func playDeclined(t *testing.T, seed uint64, effects int) declinedPlay {
	t.Helper()
	root, remote, reviewer, logPath, run := newLoopRepo(t, seed)
	active, _, err := activeAt(filepath.Join(reviewer, "weights"))
	if err != nil {
		t.Fatal(err)
	}
	logs := []string{logPath}
	seqs := []*genlive.Sequence{genlive.NewSequence(seed, genlive.Regime{Base: 0.05, Planted: planted, Carrier: 0.95, Effects: effects})}
	var p declinedPlay
	reopenedAt := 0
	for night := 1; night <= 24 && !p.reproposed; night++ {
		for i, seq := range seqs {
			_, text := seq.Night(night, &active) // no merge: main stays at v0001 all along
			appendFile(t, logs[i], text[0])
		}
		opts := EvolveOptions{Logs: logs}
		if p.declined != "" && reopenedAt == 0 {
			opts.Declined = []string{p.declined}
		}
		res, cron := cronNight(t, root, remote, night, run, opts)
		if p.declined != "" && slices.Contains(res.Declined, p.declined) {
			p.named++
		}
		if b := res.BranchResult; b != nil {
			change := b.Title[strings.LastIndex(b.Title, ": ")+2:]
			switch {
			case p.declined == "":
				p.declined, p.change = b.Branch, change // the reviewer closes it in the morning
			case reopenedAt > 0:
				p.reproposed = b.Branch == p.declined
			case b.Branch == p.declined:
				t.Errorf("seed %d night %d: the declined %s left for review again", seed, night, p.declined)
			default:
				if p.other == "" {
					p.other = change
				}
				for _, c := range strings.Split(p.change, ", ") {
					if sig, _, _ := strings.Cut(c, " "); strings.Contains(change, sig+" ") {
						t.Errorf("seed %d night %d: %s (%s) moves %s again, which the declined %s moved", seed, night, b.Branch, change, sig, p.declined)
					}
				}
			}
			if reopenedAt == 0 && slices.Contains(b.Supersedes, p.declined) {
				t.Errorf("seed %d night %d: the declined %s is listed to close as superseded", seed, night, p.declined)
			}
		}
		if p.named == 3 && reopenedAt == 0 {
			reopenedAt = night + 1
		}
		if err := os.RemoveAll(cron); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
