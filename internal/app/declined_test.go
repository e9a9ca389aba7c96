package app

import (
	"fmt"
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
// branch for review, nor a change that moves a signal it moved, nor lists it in supersedes (its request
// is closed already); the nights whose evidence still prefers it name it in Declined. When the reviewer
// reopens the request (the recipe no longer passes it), the next night proposes it again under the same
// branch name. Before, the night kept proposing the declined change: the recipes could only stay silent,
// and no other change could be proposed while the evidence preferred it.
func TestADeclinedChangeIsNotProposedAgain(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// One planted effect per sequence: once it is declined nothing else passes and pays, so these nights
	// leave nothing (two sequences pooled in one project dilute both effects until neither pays, so the
	// next change is left to the evolve tests of refused changes).
	for _, c := range []struct {
		seeds []uint64 // one log each, pooled
	}{{[]uint64{3}}, {[]uint64{4}}} {
		p := playDeclined(t, c.seeds)
		t.Logf("seeds %v: %s (%s) named declined on %d night(s); proposed instead: %q", c.seeds, p.declined, p.change, p.named, p.other)
		if p.declined == "" || p.named < 3 {
			t.Fatalf("seeds %v: the evidence never preferred the declined change on 3 nights (declined %q, named %d): the test tests nothing", c.seeds, p.declined, p.named)
		}
		if !p.reproposed {
			t.Errorf("seeds %v: reopened, the declined %s was never proposed again", c.seeds, p.declined)
		}
	}
}

// declinedPlay is what playDeclined saw: the declined branch and its change, the nights that named it
// declined, whether it was proposed again once reopened, and the change proposed while it was declined.
type declinedPlay struct {
	declined, change, other string
	named                   int
	reproposed              bool
}

// playDeclined plays the nights of TestADeclinedChangeIsNotProposedAgain with one log of the strong
// planted regime per seed, pooled.
func playDeclined(t *testing.T, seeds []uint64) declinedPlay {
	t.Helper()
	root, remote, reviewer, logDir, run := newLoopRepo(t, seeds[0])
	logDir = filepath.Dir(logDir)
	active, _, err := activeAt(filepath.Join(reviewer, "weights"))
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	var seqs []*genlive.Sequence
	for _, seed := range seeds {
		logs = append(logs, filepath.Join(logDir, fmt.Sprintf("trace-%d.log", seed)))
		seqs = append(seqs, genlive.NewSequence(seed, genlive.Regime{Base: 0.05, Planted: planted, Carrier: 0.95}))
	}
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
				t.Errorf("seeds %v night %d: the declined %s left for review again", seeds, night, p.declined)
			default:
				if p.other == "" {
					p.other = change
				}
				for _, c := range strings.Split(p.change, ", ") {
					if sig, _, _ := strings.Cut(c, " "); strings.Contains(change, sig+" ") {
						t.Errorf("seeds %v night %d: %s (%s) moves %s again, which the declined %s moved", seeds, night, b.Branch, change, sig, p.declined)
					}
				}
			}
			if reopenedAt == 0 && slices.Contains(b.Supersedes, p.declined) {
				t.Errorf("seeds %v night %d: the declined %s is listed to close as superseded", seeds, night, p.declined)
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
