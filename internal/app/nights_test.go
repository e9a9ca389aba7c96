package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// The night-after-night harness through the real file store (docs/decisions.md#harness): a growing
// trace log on disk, `tune nightly` (Nightly: watch, evolve loop, proposal written with store.Propose,
// report) and then `tune apply` of the night's proposal (store.Store.Apply, the ledger in the apply
// entry of evolution.jsonl). Next to it runs an in-memory twin: evolve.Loop with the weights and the
// ledger carried in memory, as internal/evolve's harness does. Every night the two must agree on the
// decision and the weights, the store's ledger must equal the twin's, and the store must verify — so the
// ledger's write-and-read-back path is exercised night after night, not only once. The default run is
// short: 8 nights of noise, and 20 nights of the planted sequence 4021, which applies a change within
// them and leaves its ledgered tasks out on three later nights (chosen for that since issue 28's
// accumulated evidence, so that the short run writes the ledger and the evidence watermark and reads
// them back on the nights after); TUNE_HARNESS=full plays 8 sequences of each for 30 nights and prints the rates
// (TUNE_HARNESS=heldout on seeds offset by 2^32).
func TestNightsThroughTheStore(t *testing.T) {
	seqs, nights := 1, 8
	noiseSeed, plantedSeed, plantedNights := uint64(3001), uint64(4021), 20
	full := os.Getenv("TUNE_HARNESS") == "full" || os.Getenv("TUNE_HARNESS") == "heldout"
	if full {
		seqs, nights, noiseSeed, plantedSeed, plantedNights = 8, 30, 3001, 4001, 30
	}
	if os.Getenv("TUNE_HARNESS") == "heldout" {
		noiseSeed, plantedSeed = noiseSeed+1<<32, plantedSeed+1<<32
	}
	origin := testutil.ReferenceWeights()
	var noise, planted nightsTally
	for seq := uint64(0); seq < uint64(seqs); seq++ {
		noise.add(playNights(t, genhistory.NewNoise(noiseSeed+seq, &origin, genhistory.RegimeIndependent), nights))
		planted.add(playNights(t, genhistory.NewPlanted(plantedSeed+seq, &origin), plantedNights))
	}
	msgN := fmt.Sprintf("through the store, %d nights on noise: %d sequences, %s", nights, seqs, noise)
	msgP := fmt.Sprintf("through the store, %d nights planted: %d sequences, %s", plantedNights, seqs, planted)
	t.Log(msgN)
	t.Log(msgP)
	// The targets: at most one applied change per 16 sequences on noise; no weight more than 2
	// points from v0001 without escalating.
	if float64(noise.applied) > float64(seqs)/16 {
		t.Errorf("%s: above one applied change per 16 sequences", msgN)
	}
	if planted.drift > weights.Whole(evolve.DriftBound) || noise.drift > weights.Whole(evolve.DriftBound) {
		t.Errorf("%s: a weight drifted beyond %d points", msgP, evolve.DriftBound)
	}
	if !full && (planted.applied == 0 || planted.usedSeen == 0) {
		// The short planted sequence must apply, and a later night must leave the ledgered tasks out,
		// or the ledger path was never written and read back.
		t.Errorf("%s: the store's ledger was never written and read back", msgP)
	}
}

type nightsTally struct {
	applied, escalations, watchStops, ledgered int
	// usedSeen counts nights whose window left ledgered tasks out as already used.
	usedSeen int
	drift    weights.Half
}

func (n *nightsTally) add(o nightsTally) {
	n.applied += o.applied
	n.escalations += o.escalations
	n.watchStops += o.watchStops
	n.ledgered += o.ledgered
	n.usedSeen += o.usedSeen
	n.drift = max(n.drift, o.drift)
}

func (n nightsTally) String() string {
	return fmt.Sprintf("%d applied changes, %d ledgered tasks, %d nights leaving ledgered tasks out, largest drift %s points, %d escalations, %d nights stopped by the watch",
		n.applied, n.ledgered, n.usedSeen, n.drift, n.escalations, n.watchStops)
}

// playNights plays one sequence in a fresh copy of the reference store and fixtures.
func playNights(t *testing.T, s *genhistory.Stream, nights int) nightsTally {
	t.Helper()
	dir := t.TempDir()
	if err := testutil.CopyReference(dir); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	env := Env{Now: func() time.Time { return now }, WeightsDir: filepath.Join(dir, "weights"),
		FixturesDir: filepath.Join(dir, "fixtures"), ReportsDir: filepath.Join(dir, "reports")}
	logPath := filepath.Join(dir, "trace.log")

	// The in-memory twin.
	origin := testutil.ReferenceWeights()
	fx, err := fixtures.LoadSuite(env.FixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	suite, holdout := evolve.PrepareSuite(fx.Scenarios), evolve.PrepareSuite(fx.Holdout)
	parity, err := BuiltinParity()
	if err != nil {
		t.Fatal(err)
	}
	memActive, memUsed := origin, map[string]string{}
	var memAfter time.Time
	memVersions := map[string]weights.Weights{weights.VersionName(1): origin}
	resolve := func(name string) (*weights.Weights, bool) {
		w, ok := memVersions[name]
		return &w, ok
	}

	var tally nightsTally
	written := 0
	for night := 1; night <= nights; night++ {
		active, _, err := activeAt(env.WeightsDir)
		if err != nil {
			t.Fatal(err)
		}
		// Tonight's tasks were dispatched under the active version (weights=vNNNN on their meta lines)
		// and are appended to the log, as an agent's writer does.
		s.SetWeights(&active)
		tasks := s.Next(6)
		for i := range tasks {
			tasks[i].WeightsVersion = active.Version
		}
		h := &genhistory.History{Start: start.Add(time.Duration(written) * time.Hour), Step: time.Hour, Weights: &active, Tasks: tasks}
		appendFile(t, logPath, h.Render())
		written += len(tasks)
		now = start.Add(time.Duration(written)*time.Hour + 30*time.Minute)

		out, err := Nightly(env, EvolveOptions{Logs: []string{logPath}})
		if err != nil {
			t.Fatalf("night %d: %v", night, err)
		}
		where := fmt.Sprintf("night %d (%s)", night, out.Outcome)
		if out.Outcome == OutcomeWatchHarmful {
			// The watch stopped the evolve (its rollback proposal waits for a human): the twin skips
			// the night too.
			tally.watchStops++
			continue
		}
		if out.Escalated() {
			tally.escalations++
		}

		// The twin reads the whole log into memory and hands the detection its task list: the store run
		// streams it (docs/decisions.md#flat-memory-issue-28), and both must decide alike.
		read, err := traceparse.ReadLast(logPath, 0)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := evolve.Loop(evolve.LoopInput{Tasks: read.Tasks, Parent: memActive, WeightsFor: resolve, Suite: suite,
			Holdout: holdout, Parity: parity, Origin: &origin, Used: memUsed, Now: now, EvidenceAfter: memAfter})
		if err != nil {
			t.Fatal(err)
		}
		if mem.Decision() != out.Decision || mem.Final.Signals != out.Loop.Final.Signals || mem.Final.Buckets != out.Loop.Final.Buckets {
			t.Fatalf("%s: the store run decided %s, the in-memory twin %s (%s)", where, out.Decision, mem.Decision(), mem.Reason)
		}

		if out.Stored != nil && out.Stored.Applicable() {
			res, err := Apply(env, out.Stored.ID, -1)
			if err != nil {
				t.Fatalf("%s: apply %s: %v", where, out.Stored.ID, err)
			}
			tally.applied++
			next := mem.Final
			next.Version, next.Parent = memActive.Version+1, memActive.Version
			v := weights.VersionName(next.Version)
			if res.Version != v {
				t.Fatalf("%s: applied as %s, the twin's next version is %s", where, res.Version, v)
			}
			for _, k := range mem.SupportingKeys() {
				if by, used := memUsed[k]; used {
					t.Fatalf("%s: task %s supported %s already; a task supports at most one change", where, k, by)
				}
				memUsed[k] = v
			}
			memVersions[v] = next
			memActive = next
			// The evidence watermark moves to the applied proposal's evidence_through, in the store as in
			// the twin.
			if through, err := time.Parse(time.RFC3339Nano, mem.Detection.Accumulated.Through); err == nil {
				memAfter = through
			}
			if out.Stored.EvidenceThrough != mem.Detection.Accumulated.Through {
				t.Fatalf("%s: the proposal records evidence_through %q, the twin %q", where, out.Stored.EvidenceThrough, mem.Detection.Accumulated.Through)
			}
		} else if _, err := Apply(env, "", -1); !errors.Is(err, store.ErrNothingToDo) {
			t.Fatalf("%s: nothing was proposed, but apply found something to do (%v)", where, err)
		}

		// The store after the night: it verifies, its active weights are the twin's, and its ledger (read
		// back from evolution.jsonl) is the twin's.
		st, err := env.OpenStore()
		if err != nil {
			t.Fatal(err)
		}
		if probs := st.Verify(); len(probs) > 0 {
			t.Fatalf("%s: the store does not verify: %v", where, probs)
		}
		got, err := st.Active()
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != memActive.Version || got.Signals != memActive.Signals || got.Buckets != memActive.Buckets {
			t.Fatalf("%s: active %s in the store, %s in the twin", where, weights.VersionName(got.Version), weights.VersionName(memActive.Version))
		}
		ledger, err := st.Ledger()
		if err != nil {
			t.Fatal(err)
		}
		if after, err := st.EvidenceWatermark(); err != nil || !after.Equal(memAfter) {
			t.Fatalf("%s: evidence watermark %v in evolution.jsonl, %v in the twin (%v)", where, after, memAfter, err)
		}
		if !mapsEqual(ledger, memUsed) {
			t.Fatalf("%s: ledger in evolution.jsonl %v, in the twin %v", where, sortedKeys(ledger), sortedKeys(memUsed))
		}
		// Every ledgered task still in tonight's window was left out as already used.
		if len(out.Loop.Detection.Used) > 0 {
			tally.usedSeen++
		}
		for _, u := range out.Loop.Detection.Used {
			if _, ok := ledger[u.Key]; !ok {
				t.Fatalf("%s: %s shown as already used, but the ledger does not name it", where, u.Key)
			}
		}
		for i := range origin.Signals {
			d := got.Signals[i] - origin.Signals[i]
			tally.drift = max(tally.drift, d, -d)
		}
	}
	tally.ledgered = len(memUsed)
	return tally
}

func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
