package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// A night whose watch is fed by the detection's read (docs/decisions.md#one-read-for-the-watch-and-the-detection)
// judges and decides exactly as the watch on its own read followed by the evolve on its own: the same
// watch result, the same evolve result, the same files and the same states, night after night, through
// applies and the watch's rollbacks. Both projects lose their states every night, so that every night
// with a version applied reads in full (the shared read's case).
func TestOneReadJudgesAsTwoReads(t *testing.T) {
	regimes := []genlive.Regime{
		{Name: "correct change", Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95, Logs: 2},
		{Name: "level-insensitive", Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95, LevelInsensitive: true, Logs: 2},
	}
	taps, rollbacks := int64(0), 0
	for _, rg := range regimes {
		var now time.Time
		shared, alone := newStateProject(t, &now, rg.Logs), newStateProject(t, &now, rg.Logs)
		seq := genlive.NewSequence(1, rg)
		for night := 1; night <= 16; night++ {
			text := nightUnder(t, shared.env.WeightsDir, seq, night)
			for _, p := range []*stateProject{shared, alone} {
				for i, l := range p.logs {
					appendFile(t, l, text[i])
				}
				if err := os.RemoveAll(filepath.Join(p.env.WeightsDir, store.CacheDir)); err != nil {
					t.Fatal(err)
				}
			}
			now = genlive.NightEnd(night)

			before := sharedReads.Load()
			out, err := Nightly(shared.env, EvolveOptions{Logs: shared.logs})
			if err != nil {
				t.Fatalf("%s, night %d: %v", rg.Name, night, err)
			}
			taps += sharedReads.Load() - before

			// The two reads: the watch first, then (unless it found the version harmful) the evolve.
			wr, err := Watch(alone.env, WatchOptions{Logs: alone.logs, nightState: true})
			var nothing *NothingToWatchError
			if err != nil && !errors.As(err, &nothing) {
				t.Fatal(err)
			}
			if !bytes.Equal(shared.jsonOf(t, out.Watch), alone.jsonOf(t, wr)) {
				t.Fatalf("%s, night %d: the watch on the shared read judged\n%s\nand on its own read\n%s", rg.Name, night,
					shared.jsonOf(t, out.Watch), alone.jsonOf(t, wr))
			}
			review := ""
			if wr != nil && wr.Proposal != "" {
				review = wr.Proposal
				rollbacks++
			}
			if wr == nil || wr.Verdict != watch.Harmful {
				ev, err := Evolve(alone.env, EvolveOptions{Logs: alone.logs, nightState: true})
				if err != nil {
					t.Fatal(err)
				}
				got := *out.EvolveResult
				got.Watch, got.WatchNote, got.Reports = nil, "", nil
				ev.Reports = nil
				if !bytes.Equal(shared.jsonOf(t, &got), alone.jsonOf(t, ev)) {
					t.Fatalf("%s, night %d: the evolve on the shared read decided\n%s\nand on its own read\n%s", rg.Name, night,
						shared.jsonOf(t, &got), alone.jsonOf(t, ev))
				}
				if review == "" && ev.Stored != nil && ev.Stored.Applicable() {
					review = ev.Stored.ID
				}
			}
			if review != out.ReviewProposal {
				t.Fatalf("%s, night %d: the shared read leaves %q to review, the two reads %q", rg.Name, night, out.ReviewProposal, review)
			}
			a, b := shared.stored(t), alone.stored(t)
			for path, data := range b {
				if a[path] != data {
					t.Errorf("%s, night %d: %s differs between the shared read and the two reads", rg.Name, night, path)
				}
			}
			if len(a) != len(b) {
				t.Errorf("%s, night %d: %d files in the store after the shared read, %d after the two reads", rg.Name, night, len(a), len(b))
			}
			if review != "" {
				for _, p := range []*stateProject{shared, alone} {
					if _, err := Apply(p.env, review, -1); err != nil && !errors.Is(err, store.ErrNothingToDo) {
						t.Fatal(err)
					}
				}
			}
		}
	}
	t.Logf("%d nights fed the watch from the detection's read; %d rollback(s) proposed", taps, rollbacks)
	if taps < 5 || rollbacks == 0 {
		t.Errorf("%d shared reads and %d rollbacks in 32 nights: the test tests too little", taps, rollbacks)
	}
}

// stored is every file in the project's store, its nightly states included (without their keys) but
// not the lock, its directory replaced by a placeholder, by path.
func (p *stateProject) stored(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(p.env.WeightsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == NightlyLockName {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(path)) == store.CacheDir && strings.HasSuffix(path, ".json") {
			// A state's key hashes its logs' paths, which differ between two projects.
			var st map[string]any
			if err := json.Unmarshal(data, &st); err != nil {
				return err
			}
			delete(st, "key")
			if data, err = json.Marshal(st); err != nil {
				return err
			}
		}
		rel, _ := filepath.Rel(p.dir, path)
		out[rel] = strings.ReplaceAll(string(data), p.dir, "$DIR")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The watch opens its logs as the detection does: a log named twice (a glob and an explicit path) is
// read once, not judged twice over.
func TestWatchReadsALogNamedTwiceOnce(t *testing.T) {
	var now time.Time
	p := newStateProject(t, &now, 1)
	seq := genlive.NewSequence(1, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95, LevelInsensitive: true})
	var once, twice []byte
	for night := 1; night <= 16; night++ {
		text := nightUnder(t, p.env.WeightsDir, seq, night)
		appendFile(t, p.logs[0], text[0])
		now = genlive.NightEnd(night)
		out, err := Nightly(p.env, EvolveOptions{Logs: p.logs})
		if err != nil {
			t.Fatal(err)
		}
		if out.Review != "" {
			if _, err := Apply(p.env, out.ReviewProposal, -1); err != nil && !errors.Is(err, store.ErrNothingToDo) {
				t.Fatal(err)
			}
		}
		if out.Watch == nil || out.Watch.Moved == 0 {
			continue
		}
		alias := filepath.Join(filepath.Dir(p.logs[0]), ".", filepath.Base(p.logs[0]))
		a, errA := Watch(p.env, WatchOptions{Logs: p.logs})
		b, errB := Watch(p.env, WatchOptions{Logs: []string{p.logs[0], alias}})
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		once, twice = p.jsonOf(t, a), p.jsonOf(t, b)
		if !bytes.Equal(once, twice) {
			t.Fatalf("night %d: the watch of a log named twice judged\n%s\nand of it named once\n%s", night, twice, once)
		}
	}
	if once == nil {
		t.Fatal("no night had a version applied that moved a task: the test tests nothing")
	}
}
