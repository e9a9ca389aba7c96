package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// resumesWatch says whether the project's next watch would take its logs up from the watch state.
func (p *stateProject) resumesWatch(t *testing.T) bool {
	t.Helper()
	w, err := watchInput(p.env, WatchOptions{Logs: p.logs})
	var nothing *NothingToWatchError
	if errors.As(err, &nothing) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return loadWatchState(p.env.WeightsDir, watchStateKey(w.in, w.logs, w.in.Logs), w.logs, w.in.Logs) != nil
}

// A nightly watch that starts from the watch state judges exactly as one that reads every log in full:
// the same result (JSON) night after night on two growing logs, when a night ends inside a task that the
// next night finishes, and when a log is rewritten in place, truncated or rotated, or the state file is
// garbage or holds what no Builder makes (each of those nights reads in full).
func TestWatchStateJudgesAsAFullRead(t *testing.T) {
	var now time.Time
	cached, full := newStateProject(t, &now, 2), newStateProject(t, &now, 2)
	seq := genlive.NewSequence(3, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.75,
		LevelInsensitive: true, Logs: 2})
	const applyAt, nights = 6, 24
	statePath := filepath.Join(cached.env.WeightsDir, store.CacheDir, store.WatchStateFile)
	resumed, moved := 0, 0
	var held [2][]byte // the part of a task a night ended inside, appended the next night
	for night := 1; night <= nights; night++ {
		active, _, err := activeAt(cached.env.WeightsDir)
		if err != nil {
			t.Fatal(err)
		}
		text := make([][]byte, 2)
		if night != 22 && night != 23 { // a weekend: Monday's tasks end the open horizons (docs/decisions.md#settling)
			_, text = seq.Night(night, &active)
		}
		if night == 10 { // the night ends inside the last task of log 0
			cut := len(text[0]) - 25
			text[0], held[0] = text[0][:cut], text[0][cut:]
		}
		for _, p := range []*stateProject{cached, full} {
			for i, l := range p.logs {
				appendFile(t, l, append(append([]byte{}, held[i]...), text[i]...))
			}
			switch night {
			case 13: // a task's title edited in place: same size, other bytes
				rewriteLog(t, p.logs[0], func(b []byte) []byte { return bytes.Replace(b, []byte("task=\""), []byte("task=\"X"), 1)[:len(b)] })
			case 15: // truncated in the middle of a line, then written on
				rewriteLog(t, p.logs[1], func(b []byte) []byte { return append(b[:len(b)*2/3], '\n') })
			case 17: // rotated: the log holds only this night's tasks
				if err := os.Rename(p.logs[0], p.logs[0]+".1"); err != nil {
					t.Fatal(err)
				}
				appendFile(t, p.logs[0], text[0])
			}
		}
		if night != 10 {
			held[0] = nil
		}
		now = genlive.NightEnd(night)
		if night == applyAt {
			for _, p := range []*stateProject{cached, full} {
				applyStepByHand(t, p.env, now, seq.Signal, 2)
			}
		}
		if night <= applyAt {
			continue
		}
		switch night {
		case 19: // not a state at all
			if err := os.WriteFile(statePath, []byte("{\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		case 21: // an open task beyond the horizon
			data, err := os.ReadFile(statePath)
			if err != nil {
				t.Fatal(err)
			}
			st, err := decodeState[watchState](data)
			if err != nil {
				t.Fatal(err)
			}
			last := st.Logs[0].State
			if len(last.Open) == 0 {
				t.Fatalf("night %d: no open task in the state to spoil", night)
			}
			last.Open[0].At = last.Labelled - 30
			if data, err = encodeState(st); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(statePath, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		n := cached.resumesWatch(t)
		disturbed := night == applyAt+1 || night == 13 || night == 15 || night == 17 || night == 19 || night == 21
		if n == disturbed {
			t.Errorf("night %d: taken up from the state %t, want %t", night, n, !disturbed)
		}
		if n {
			resumed++
		}
		out, outs := watchBoth(t, night, cached, full)
		moved = out.Moved
		t.Logf("night %d: from the state %t; %s, %d moved, %d before, %d after", night, n, out.Verdict, out.Moved, out.TasksBefore, out.TasksAfter)
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("night %d: the watch from the state judged otherwise than the full read:\n%s\n%s", night, outs[0], outs[1])
		}
	}
	if resumed < 10 || moved == 0 {
		t.Errorf("taken up from the state on %d nights, %d tasks moved at the end: the test tests too little", resumed, moved)
	}
}

// watchBoth runs the night's watch of the cached project (from its state) and of the full one, and
// returns the cached one's result and both as JSON.
func watchBoth(t *testing.T, night int, cached, full *stateProject) (*WatchResult, [2][]byte) {
	t.Helper()
	var first *WatchResult
	var outs [2][]byte
	for i, p := range []*stateProject{cached, full} {
		out, err := Watch(p.env, WatchOptions{Logs: p.logs, nightState: p == cached})
		if err != nil {
			t.Fatalf("night %d: %v", night, err)
		}
		// the judgement, not the reader's warnings: a night leaves those to its detection's read
		judged := *out
		judged.Warnings = nil
		outs[i] = p.jsonOf(t, &judged)
		if i == 0 {
			first = out
		}
	}
	return first, outs
}

// The watch state file is hostile input: whatever its bytes, decoding it and taking up the parts that
// pass the check, then judging on, never panics; a part that fails the check is refused whole.
func FuzzWatchState(f *testing.F) {
	p, _, err := activeAt(filepath.Join(testutil.RepoRoot(), "weights"))
	if err != nil {
		f.Fatal(err)
	}
	seq := genlive.NewSequence(1, genlive.Regime{Base: 0.2, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.75, LevelInsensitive: true})
	v := p
	v.Version, v.Parent = 2, 1
	v.Signals[seq.Signal] += weights.Whole(2)
	var log []byte
	for night := 1; night <= 8; night++ {
		active := &p
		if night > 4 {
			active = &v
		}
		_, text := seq.Night(night, active)
		log = append(log, text[0]...)
	}
	tasks, err := traceparse.Parse(bytes.NewReader(log), "trace.log")
	if err != nil {
		f.Fatal(err)
	}
	in := watch.Input{Version: watch.Version{Weights: &v, From: genlive.NightEnd(4)}, Parent: watch.Version{Weights: &p, From: genlive.Start},
		Logs: []string{"trace.log"}}
	b := watch.NewBuilder(in)
	for i := range tasks.Tasks[:len(tasks.Tasks)-1] {
		b.Add(&tasks.Tasks[i])
	}
	last := tasks.Tasks[len(tasks.Tasks)-1]
	st := b.State("trace.log")
	if len(st.Open) == 0 || len(st.Kept) == 0 {
		f.Fatalf("the seed state holds %d open and %d kept tasks: too little to fuzz from", len(st.Open), len(st.Kept))
	}
	valid, err := encodeState(&watchState{Format: watchStateFormat, Key: "k", Logs: []watchLogRef{{Path: "trace.log", Offset: last.Offset, Line: last.Line, State: st}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"format":1,"logs":[{"path":"trace.log","offset":10,"line":3,"state":{"source":"trace.log","before":2,"after":1,"before_n":[1,0,0],` +
		`"labelled":3,"kept":[{"line":3,"ts":"t","from":"L1","to":"L2","level":"L2","test":"not helping","k":1,"terminal":"complete"}],` +
		`"open":[{"at":1,"ts":"s","time":"2026-01-01T00:00:00Z","kept":-1,"cat":0,"area":{"files":null,"paths":["a.go"]}},{"at":2,"ts":"t","kept":0}]}}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState[watchState](data)
		if err != nil {
			return
		}
		for _, l := range st.Logs {
			if l.State == nil {
				continue
			}
			b := watch.NewBuilder(in)
			if err := b.Restore(l.State); err != nil {
				if l.State.Check() == nil {
					t.Errorf("a state that passes the check refused: %v", err)
				}
				continue
			}
			one := last
			one.Source = l.State.Source
			b.Add(&one)
			b.Result()
		}
	})
}
