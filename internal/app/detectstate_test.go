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

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// stateProject is one copy of a project for the nightly-state test.
type stateProject struct {
	dir  string
	env  Env
	logs []string
}

func newStateProject(t *testing.T, now *time.Time, logs int) *stateProject {
	t.Helper()
	dir := t.TempDir()
	if err := testutil.CopyReference(dir); err != nil {
		t.Fatal(err)
	}
	p := &stateProject{dir: dir, env: Env{Now: func() time.Time { return *now }, WeightsDir: filepath.Join(dir, "weights"),
		FixturesDir: filepath.Join(dir, "fixtures"), ReportsDir: filepath.Join(dir, "reports"), Root: dir}}
	for i := 0; i < logs; i++ {
		l := filepath.Join(dir, "p"+string(rune('a'+i)), ".ldd", "trace.log")
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			t.Fatal(err)
		}
		p.logs = append(p.logs, l)
	}
	return p
}

// written is every file the project's nightly runs wrote (reports, proposals, the store's log), its
// directory replaced by a placeholder, by path.
func (p *stateProject) written(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range []string{p.env.ReportsDir, p.env.WeightsDir} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == store.CacheDir {
				return filepath.SkipDir
			}
			if d.IsDir() || strings.HasPrefix(d.Name(), ".") && strings.HasSuffix(d.Name(), "lock") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(p.dir, path)
			out[rel] = strings.ReplaceAll(string(data), p.dir, "$DIR")
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return out
}

// jsonOf is v as JSON, the project's directory replaced by a placeholder: what two projects' runs are
// compared by.
func (p *stateProject) jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(data), p.dir, "$DIR"))
}

// night runs the nightly on p and applies what it sends to review, as a project's nightly job and its
// reviewer would: the result as run, and its JSON without TasksFromState (the one field that says where
// the tasks came from; everything else of a night from the state must be the full read's bytes).
func (p *stateProject) night(t *testing.T) (*NightlyResult, []byte) {
	t.Helper()
	out, err := Nightly(p.env, EvolveOptions{Logs: p.logs})
	if err != nil {
		t.Fatal(err)
	}
	fromState := out.TasksFromState
	out.TasksFromState = 0
	js := p.jsonOf(t, out)
	out.TasksFromState = fromState
	if out.Review != "" {
		if _, err := Apply(p.env, out.ReviewProposal, -1); err != nil && !errors.Is(err, store.ErrNothingToDo) {
			t.Fatal(err)
		}
	}
	return out, js
}

// nightUnder is night n of seq dispatched under the weights active in weightsDir, as a live project's
// hook dispatches it.
func nightUnder(t testing.TB, weightsDir string, seq *genlive.Sequence, night int) [][]byte {
	t.Helper()
	active, _, err := activeAt(weightsDir)
	if err != nil {
		t.Fatal(err)
	}
	_, text := seq.Night(night, &active)
	return text
}

// resumes says how many logs the project's next night would take up from its nightly state with tasks
// before its offset.
func (p *stateProject) resumes(t *testing.T) int {
	t.Helper()
	in, err := readStepInputs(p.env, p.logs, true)
	if err != nil {
		t.Fatal(err)
	}
	in.read.loadDetectState(p.env.WeightsDir, in.stateKey(p.env))
	n := 0
	for _, c := range in.read.resume {
		// A state whose held tasks begin at the log's first gives no task: the night reads it all (a
		// short log: a state holds its last WindowSize tasks, the horizon still open and the 19
		// counted ones before them, docs/decisions.md#nightly-state).
		if c.Tasks > 0 {
			n++
		}
	}
	return n
}

// A night that starts from the nightly state decides exactly as a night that reads every log in full:
// the same result, the same files written, night after night (applies change the key: those nights
// read in full), through a weekend without tasks (docs/decisions.md#settling), when a log is rewritten
// or truncated behind the state's back, and when the state file is garbage or names what it does not
// hold.
func TestNightlyStateDecidesAsAFullRead(t *testing.T) {
	var now time.Time
	cached, full := newStateProject(t, &now, 2), newStateProject(t, &now, 2)
	seq := genlive.NewSequence(1, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95, Logs: 2})
	const nights = 14
	resumed, applied, watched := 0, 0, 0
	for night := 1; night <= nights; night++ {
		var text [][]byte
		if night != 4 && night != 5 { // a weekend: the nightly finds the logs quiet, Monday's tasks end their horizons
			text = nightUnder(t, cached.env.WeightsDir, seq, night)
		}
		for _, p := range []*stateProject{cached, full} {
			for i, l := range p.logs {
				if text != nil {
					appendFile(t, l, text[i])
				}
			}
			switch night {
			case 6: // a task's title edited in place: same size, other bytes
				rewriteLog(t, p.logs[0], func(b []byte) []byte { return bytes.Replace(b, []byte("task=\""), []byte("task=\"X"), 1)[:len(b)] })
			case 9: // truncated in the middle of a line, then written on
				rewriteLog(t, p.logs[1], func(b []byte) []byte { return b[:len(b)*2/3] })
			}
		}
		if err := os.RemoveAll(filepath.Join(full.env.WeightsDir, store.CacheDir)); err != nil {
			t.Fatal(err)
		}
		statePath := filepath.Join(cached.env.WeightsDir, store.CacheDir, store.DetectStateFile)
		switch night {
		case 11: // not a state at all
			if err := os.WriteFile(statePath, []byte("{\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		case 12: // a state whose first log's first cell names a signal list it does not have
			data, err := os.ReadFile(statePath)
			if err != nil {
				t.Fatal(err)
			}
			st, err := decodeState[detectState](data)
			if err != nil || len(st.Logs) == 0 {
				t.Fatalf("night %d: the state does not decode (%v) or holds no log", night, err)
			}
			st.Logs[0].State.Cells[0][0] = len(st.Logs[0].State.Sigs)
			if data, err = encodeState(st); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(statePath, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		n := cached.resumes(t)
		resumed += n
		if cached.resumesWatch(t) {
			watched++ // the watch taken up from its own state (docs/decisions.md#watch-state)
		}
		if (night == 6 || night == 9 || night == 12) && n == 2 || (night == 11 || applied == night-1) && n != 0 {
			t.Errorf("night %d: %d log(s) taken up from a state that does not hold for them", night, n)
		}
		now = genlive.NightEnd(night)
		var outs [2][]byte
		for i, p := range []*stateProject{cached, full} {
			var out *NightlyResult
			out, outs[i] = p.night(t)
			// The cached night's count of the tasks its state gave, none for the full read.
			if got := out.TasksFromState; (i == 0 && n > 0) != (got > 0) || got > out.Tasks {
				t.Errorf("night %d: %d of %d task(s) taken up from the state, %d log(s) taken up", night, got, out.Tasks, n*(1-i))
			}
			if i == 0 {
				t.Logf("night %d: %d log(s) taken up from the state; %s, %d counted (%d flagged), review %q", night, n, out.Outcome,
					out.Loop.Detection.Accumulated.Eligible, out.Loop.Detection.Accumulated.Flagged, out.Review)
			}
			if out.Review != "" {
				applied = night // an apply changes the active weights, the ledger and the watermark: the key
			}
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("night %d: the night from the state decided otherwise than the full read:\n%s\n%s", night, outs[0], outs[1])
		}
		a, b := cached.written(t), full.written(t)
		for path, data := range b {
			if a[path] != data {
				t.Errorf("night %d: %s differs between the night from the state and the full read", night, path)
			}
		}
		if len(a) != len(b) {
			t.Errorf("night %d: %d files written from the state, %d by the full read", night, len(a), len(b))
		}
	}
	if watched == 0 {
		t.Errorf("the nightly watch never took its logs up from its state in %d nights (last apply on night %d)", nights, applied)
	}
	t.Logf("the watch taken up from its state on %d nights", watched)
	if resumed < nights || applied == 0 {
		t.Errorf("logs taken up from the state %d times in %d nights of 2 logs, last apply on night %d: the test tests too little", resumed, nights, applied)
	}
}

// rewriteLog replaces the log's content by edit's, keeping its modification time's meaning (a write).
func rewriteLog(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The state file is hostile input: whatever its bytes, decoding it and taking up what passes the checks
// never panics, and a state that passes is taken up into a detection without a panic either.
func FuzzDetectState(f *testing.F) {
	w, _, err := activeAt(filepath.Join(testutil.RepoRoot(), "weights"))
	if err != nil {
		f.Fatal(err)
	}
	seq := genlive.NewSequence(1, genlive.Regime{Base: 0.2})
	var log []byte
	for night := 1; night <= 4; night++ {
		_, text := seq.Night(night, &w)
		log = append(log, text[0]...)
	}
	tasks, err := traceparse.Parse(bytes.NewReader(log), "trace.log")
	if err != nil {
		f.Fatal(err)
	}
	det := evolve.Detect(evolve.DetectInput{Tasks: tasks.Tasks, Resolver: evolve.Resolver{Active: &w}})
	st := &detectState{Format: detectStateFormat, Key: "k"}
	for _, s := range det.States() {
		st.Logs = append(st.Logs, cachedLog{Path: "trace.log", State: s})
	}
	valid, err := encodeState(st)
	if err != nil || len(st.Logs) == 0 {
		f.Fatalf("no state to start from: %v", err)
	}
	f.Add(valid)
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"format":3,"logs":[{"state":{"source":"trace.log","offset":10,"line":3,"labelled":1,"cells":[[0,3,0,1]],"sigs":[[1]],"tasks":1,"eligible":1,"flagged":1,` +
		`"warnings":{"listed":[{"source":"trace.log","line":3,"reason":"r","kind":2}],"counts":[0,0,1]}}}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState[detectState](data)
		if err != nil {
			return
		}
		for _, c := range st.Logs {
			if c.State == nil {
				continue
			}
			if c.State.Check() != nil {
				continue
			}
			one := []traceparse.Task{tasks.Tasks[len(tasks.Tasks)-1]}
			one[0].Source = c.State.Source
			evolve.Detect(evolve.DetectInput{Tasks: one, Resolver: evolve.Resolver{Active: &w},
				Resume: map[string]*evolve.LogState{c.State.Source: c.State}})
		}
	})
}

// A night takes up the nightly states whatever the spelling of its log: cron names it by its absolute
// path, a person by a relative one from the project, or with a "./" inside. Before, the states were keyed
// by the path as given, so every change of spelling read the whole log again (3.6 s on a 256 MB log
// instead of 0.1 s) and left a state the other spelling could not use.
func TestNightStateSurvivesAnotherSpelling(t *testing.T) {
	var now time.Time
	p := newStateProject(t, &now, 1)
	abs := p.logs[0]
	sep := string(filepath.Separator)
	alias := filepath.Dir(filepath.Dir(abs)) + sep + "." + sep + filepath.Join(".ldd", "trace.log")
	seq := genlive.NewSequence(4, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95})
	const nights = 8
	resumed, watched := 0, 0
	for night := 1; night <= nights; night++ {
		text := nightUnder(t, p.env.WeightsDir, seq, night)
		appendFile(t, abs, text[0])
		now = genlive.NightEnd(night)
		spelt, other := abs, alias
		if night%2 == 0 {
			spelt, other = alias, abs
		}
		if _, err := Nightly(p.env, EvolveOptions{Logs: []string{spelt}}); err != nil {
			t.Fatal(err)
		}
		if night == 3 {
			applyByHand(t, p.env, now, weights.LayerCrossings) // the watch has a version to judge from night 4
		}
		// What the next night would take up, named as this night named the log and the other way.
		var got [2]int
		var watch [2]bool
		for i, name := range []string{spelt, other} {
			p.logs = []string{name}
			got[i] = p.resumes(t)
			watch[i] = night > 3 && p.resumesWatch(t)
		}
		p.logs = []string{abs}
		if got[0] != got[1] || watch[0] != watch[1] {
			t.Errorf("night %d: the state taken up named %s: detection %d, watch %v; named %s: %d, %v", night, spelt, got[0], watch[0], other, got[1], watch[1])
		}
		resumed += got[1]
		if watch[1] {
			watched++
		}
	}
	// Nights with nothing settled yet and the night of the apply (a new key) leave nothing to take up.
	if resumed < nights/2 || watched < 2 {
		t.Errorf("the states were taken up after %d (detection) and %d (watch) of %d nights: the test tests little", resumed, watched, nights)
	}
}

// Over months the screen mixes its e-value over an onset at each 30-day block of a log
// (docs/decisions.md#onsets-at-30-day-blocks): the blocks a night taken up from the state knows must be
// the full read's, so 75 nights with an effect from night 40 decide alike night after night.
func TestNightlyStateDecidesAsAFullReadOverMonths(t *testing.T) {
	var now time.Time
	cached, full := newStateProject(t, &now, 1), newStateProject(t, &now, 1)
	seq := genlive.NewSequence(3, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95, Start: 40})
	resumed := 0
	for night := 1; night <= 75; night++ {
		text := nightUnder(t, cached.env.WeightsDir, seq, night)
		for _, p := range []*stateProject{cached, full} {
			appendFile(t, p.logs[0], text[0])
		}
		if err := os.RemoveAll(filepath.Join(full.env.WeightsDir, store.CacheDir)); err != nil {
			t.Fatal(err)
		}
		resumed += cached.resumes(t)
		now = genlive.NightEnd(night)
		var outs [2][]byte
		for i, p := range []*stateProject{cached, full} {
			var out *NightlyResult
			if out, outs[i] = p.night(t); out.Review != "" && i == 0 {
				t.Logf("night %d: applied %s", night, out.Review)
			}
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("night %d: the night from the state decided otherwise than the full read:\n%s\n%s", night, outs[0], outs[1])
		}
	}
	if resumed < 30 {
		t.Errorf("only %d of 75 nights taken up from the state", resumed)
	}
}
