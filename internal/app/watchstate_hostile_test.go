package app

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/weights"
)

// The fourth review's resume and hostile-state checks (docs/decisions.md#fourth-review-the-watch-state-and-explore).

// watchNights runs a cached and a full project night after night over two logs, the second one written
// with CRLF line ends, each night cut at a random byte (often inside a line, sometimes inside a meta
// line) with the rest appended the next night, and requires the same watch result from both. It returns
// the cached project at the end, with its state written.
func watchNights(t *testing.T, seed uint64, nights int) (*stateProject, *stateProject, int) {
	t.Helper()
	var now time.Time
	cached, full := newStateProject(t, &now, 2), newStateProject(t, &now, 2)
	seq := genlive.NewSequence(seed, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.75,
		LevelInsensitive: true, Logs: 2})
	rng := rand.New(rand.NewPCG(seed, 7))
	const applyAt = 4
	var held [2][]byte
	resumed := 0
	for night := 1; night <= nights; night++ {
		text := nightUnder(t, cached.env.WeightsDir, seq, night)
		var write [2][]byte
		for i := range text {
			b := append(append([]byte{}, held[i]...), text[i]...)
			if i == 1 {
				b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
				b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
			}
			cut := len(b)
			if night < nights && rng.IntN(3) > 0 {
				cut = rng.IntN(len(b) + 1)
			}
			write[i], held[i] = b[:cut], append([]byte{}, b[cut:]...)
		}
		for _, p := range []*stateProject{cached, full} {
			for i, l := range p.logs {
				appendFile(t, l, write[i])
			}
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
		if cached.resumesWatch(t) {
			resumed++
		}
		_, outs := watchBoth(t, night, cached, full)
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("seed %d night %d: the watch from the state judged otherwise than the full read:\n%s\n%s", seed, night, outs[0], outs[1])
		}
	}
	return cached, full, resumed
}

// Logs that grow by pieces cut anywhere (a task's close, or half of its meta line, arriving the next
// night), one of them with CRLF line ends: the watch from its state judges as a full read every night.
func TestWatchStateResumesCutNightsAndCRLF(t *testing.T) {
	total := 0
	for seed := uint64(1); seed <= 4; seed++ {
		_, _, resumed := watchNights(t, seed, 14)
		total += resumed
	}
	t.Logf("taken up from the state on %d of 40 nights", total)
	if total < 12 {
		t.Errorf("taken up from the state on %d nights of 40: the test tests too little", total)
	}
}

// A state written by tune and then spoiled behind its key and byte check (as a pull request or a
// bad disk could): whatever the spoiling, the night either reads in full or judges as the full read.
// The spoilings below are ones the loader can tell from the state and the log's size alone.
func TestWatchStateSpoiledBehindItsKey(t *testing.T) {
	cached, _, _ := watchNights(t, 3, 10)
	statePath := filepath.Join(cached.env.WeightsDir, store.CacheDir, store.WatchStateFile)
	orig, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Watch(cached.env, WatchOptions{Logs: cached.logs})
	if err != nil {
		t.Fatal(err)
	}
	want := cached.jsonOf(t, full)
	for name, edit := range map[string]func(st *watchState){
		"line beyond the offset":    func(st *watchState) { st.Logs[0].Line = int(st.Logs[0].Offset) + 2 },
		"line at the top":           func(st *watchState) { st.Logs[1].Line = int(^uint(0) >> 1) },
		"labelled beyond the lines": func(st *watchState) { st.Logs[0].State.Labelled = st.Logs[0].Line; st.Logs[0].State.Open = nil },
		"kept row after the offset": func(st *watchState) { st.Logs[0].State.Kept[0].Line = st.Logs[0].Line + 3 },
		"kept rows out of order": func(st *watchState) {
			k := st.Logs[0].State.Kept
			k[0].Line, k[len(k)-1].Line = k[len(k)-1].Line, k[0].Line
		},
		"offset moved":               func(st *watchState) { st.Logs[0].Offset-- },
		"negative offset":            func(st *watchState) { st.Logs[0].Offset = -1 },
		"offset beyond the log":      func(st *watchState) { st.Logs[0].Offset = 1 << 60 },
		"offset zero with counts":    func(st *watchState) { st.Logs[0].Offset, st.Logs[0].Line = 0, 1 },
		"logs swapped":               func(st *watchState) { st.Logs[0], st.Logs[1] = st.Logs[1], st.Logs[0] },
		"a state for the other name": func(st *watchState) { st.Logs[0].State.Source = st.Logs[1].State.Source },
	} {
		st, err := decodeState[watchState](orig)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Logs) != 2 || st.Logs[0].Offset == 0 || len(st.Logs[0].State.Kept) < 2 {
			t.Fatalf("the state holds too little to spoil: %s", orig)
		}
		edit(st)
		data, err := encodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(statePath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if cached.resumesWatch(t) {
			t.Errorf("%s: taken up", name)
		}
		out, err := Watch(cached.env, WatchOptions{Logs: cached.logs, nightState: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := cached.jsonOf(t, out); !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: judged otherwise than the full read, from byte %d: %.120s… instead of %.120s…", name, i, got[i:], want[i:])
		}
	}
}
