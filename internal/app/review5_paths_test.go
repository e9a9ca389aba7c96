package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
)

// A log reached by a second path — a directory symlink or a hard link beside its own path, as a glob
// over project directories gives when one of them links another — is one file: read twice it counts every
// task twice (twice the window, twice the accumulated evidence, an e-value of two copies of one table).
// The night must decide as with the log named once (the fifth review). A copy of the log (another file
// with the same tasks, as a backup or a copied project beside the original gives) is read, but its
// tasks count once and a warning names it (the explore review; docs/decisions.md#a-task-in-two-logs).
func TestALogReachedTwiceIsReadOnce(t *testing.T) {
	for _, how := range []string{"symlink", "hardlink", "copy"} {
		t.Run(how, func(t *testing.T) {
			once, twice := newR5Project(t), newR5Project(t)
			alias := filepath.Join(twice.dir, "alias", ".ldd", "trace.log")
			switch how {
			case "symlink":
				if err := os.Symlink(filepath.Dir(filepath.Dir(twice.log)), filepath.Join(twice.dir, "alias")); err != nil {
					t.Fatal(err)
				}
			case "hardlink":
				appendFile(t, twice.log, nil)
				if err := os.MkdirAll(filepath.Dir(alias), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(twice.log, alias); err != nil {
					t.Fatal(err)
				}
			}
			s := newR5Seq(77, r5Regime{base: 0.08, lifted: 0.6, deep: 0.6, days: 6})
			w := refWeights()
			for d := 0; d < 6; d++ {
				text := r5Render(s.day(d), w)
				appendFile(t, once.log, text)
				appendFile(t, twice.log, text)
				if how == "copy" {
					if d == 0 {
						if err := os.MkdirAll(filepath.Dir(alias), 0o755); err != nil {
							t.Fatal(err)
						}
					}
					appendFile(t, alias, text)
				}
				once.now = r5Start.Add(time.Duration(d)*24*time.Hour + 20*time.Hour)
				twice.now = once.now
				a := once.night(t)
				out, err := Nightly(twice.env, EvolveOptions{Logs: []string{twice.log, alias}})
				if err != nil {
					t.Fatal(err)
				}
				read := a.Tasks
				if how == "copy" {
					read *= 2 // read twice, counted once
					warned := false
					for _, w := range out.Warnings {
						warned = warned || w.Source == twice.env.LogName(alias) && w.Line == 1 && strings.HasPrefix(w.Reason, "a task of "+twice.env.LogName(twice.log)+" again")
					}
					if !warned || out.TasksFromState != 0 {
						t.Errorf("day %d: no warning names the copy at its first line (%v), or %d task(s) taken up from a state (repeats leave none)", d, out.Warnings, out.TasksFromState)
					}
				}
				if out.Tasks != read || out.Explain.Accumulated.Eligible != a.Explain.Accumulated.Eligible ||
					out.Explain.Signals[s.sig].A != a.Explain.Signals[s.sig].A {
					t.Fatalf("day %d: the log named twice (%s) gave %d task(s), %d settled eligible, %s a=%d; named once %d, %d, a=%d",
						d, how, out.Tasks, out.Explain.Accumulated.Eligible, s.sig, out.Explain.Signals[s.sig].A,
						a.Tasks, a.Explain.Accumulated.Eligible, a.Explain.Signals[s.sig].A)
				}
			}
		})
	}
}

// r5Tasks counts the tasks of the logs as the writer wrote them: one meta line a task.
func r5Tasks(t *testing.T, logs ...string) int {
	t.Helper()
	n := 0
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(data, []byte("  meta  "))
	}
	return n
}

// Nights of two logs through a project that keeps its states and one whose states are deleted every
// night (the full read): the same result every night, and tasks / tasks_from_state right — every task
// of the logs counted, the new ones read, the rest taken up — through a rotation (the log renamed away
// and a new one begun), a night that names a log through a linked directory, a night run from another
// working directory with relative paths, and states a pull request rewrote to name other absolute paths
// (/dev/zero, a FIFO, a file outside the project) for the logs the night reads. The fifth review.
func TestReview5StatesAcrossPathsAndCounts(t *testing.T) {
	cached, full := newR5Project(t), newR5Project(t)
	for _, p := range []*r5Project{cached, full} {
		if err := os.MkdirAll(filepath.Join(p.dir, "pb", ".ldd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(p.dir, "pb"), filepath.Join(p.dir, "linked")); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	fifo := filepath.Join(outside, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(outside, "trace.log")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	seqs := []*r5Seq{newR5Seq(11, r5Regime{base: 0.08, lifted: 0.5, deep: 0.6, days: 14}), newR5Seq(12, r5Regime{base: 0.08, lifted: 0.5, deep: 0.6, days: 14})}
	seqs[1].shift = 7 * time.Second // another project: no task of the same time and title as the first's
	logsOf := func(p *r5Project, night int) []string {
		b := filepath.Join(p.dir, "pb", ".ldd", "trace.log")
		if night == 7 {
			b = filepath.Join(p.dir, "linked", ".ldd", "trace.log")
		}
		return []string{p.log, b}
	}
	w := refWeights()
	taken, watched, watchResumed := 0, 0, 0
	for night := 0; night < 14; night++ {
		var added int
		texts := make([][]byte, 2)
		for i, s := range seqs {
			day := s.day(night)
			added += len(day)
			texts[i] = r5Render(day, w)
		}
		for _, p := range []*r5Project{cached, full} {
			logs := logsOf(p, 0)
			if night == 5 { // rotation: the log renamed away, a new one begun
				if err := os.Rename(logs[0], logs[0]+".1"); err != nil {
					t.Fatal(err)
				}
			}
			for i := range logs {
				appendFile(t, logs[i], texts[i])
			}
			p.now = r5Start.Add(time.Duration(night)*24*time.Hour + 20*time.Hour)
		}
		if err := os.RemoveAll(filepath.Join(full.env.WeightsDir, store.CacheDir)); err != nil {
			t.Fatal(err)
		}
		if night == 10 || night == 11 {
			spoilPaths(t, cached, []string{"/dev/zero", fifo, big, filepath.Join(outside, "nothing")}[night-10:])
		}
		if night > 2 && night != 9 && (&stateProject{dir: cached.dir, env: cached.env, logs: logsOf(cached, night)}).resumesWatch(t) {
			watchResumed++
		}
		var outs [2]*NightlyResult
		var js [2][]byte
		for i, p := range []*r5Project{cached, full} {
			logs := logsOf(p, night)
			if night == 9 { // from another working directory, the logs relative to it
				t.Chdir(filepath.Join(p.dir, "pb"))
				logs = []string{filepath.Join("..", "proj", ".ldd", "trace.log"), filepath.Join(".ldd", "trace.log")}
			}
			out, err := Nightly(p.env, EvolveOptions{Logs: logs})
			if err != nil {
				t.Fatalf("night %d: %v", night, err)
			}
			outs[i] = out
			o := *out
			o.TasksFromState = 0
			js[i] = []byte(strings.ReplaceAll(string((&stateProject{dir: p.dir}).jsonOf(t, &o)), "/linked/", "/pb/"))
		}
		all := r5Tasks(t, logsOf(cached, 0)...)
		c := outs[0]
		if c.Tasks != all || outs[1].Tasks != all || outs[1].TasksFromState != 0 {
			t.Errorf("night %d: %d task(s) in the logs; the night from the state counted %d, the full read %d (%d from a state)", night, all, c.Tasks, outs[1].Tasks, outs[1].TasksFromState)
		}
		if read := c.Tasks - c.TasksFromState; read < added || c.TasksFromState < 0 {
			t.Errorf("night %d: %d of %d task(s) taken up from the state, %d read: the %d new ones were not all read", night, c.TasksFromState, c.Tasks, read, added)
		}
		// Not taken up: night 2, whose state of two short nights holds every task (the last WindowSize,
		// the open horizon and the 19 counted ones before them, docs/decisions.md#nightly-state), the
		// night after the apply (night 3: a new key), a log spelt through the link
		// (night 7: another absolute path, so another key) and
		// the night after it (the state is the link's), the spoiled states; the rotated log (night 5) is
		// read in full, the other taken up.
		if want := night > 3 && night != 7 && night != 8 && night != 10 && night != 11; want != (c.TasksFromState > 0) {
			t.Errorf("night %d: %d task(s) taken up from the state, want some: %v", night, c.TasksFromState, want)
		}
		if b := r5Tasks(t, logsOf(cached, 0)[1]) - len(bytes.Split(texts[1], []byte("  meta  "))) + 1; night == 5 && c.TasksFromState > b {
			t.Errorf("night 5: %d task(s) taken up from the state, but only the other log's %d were there last night", c.TasksFromState, b)
		}
		taken += c.TasksFromState
		if !bytes.Equal(js[0], js[1]) {
			t.Fatalf("night %d: the night from the state decided otherwise than the full read:\n%s\n%s", night, js[0], js[1])
		}
		if c.Watch != nil {
			watched++
		}
		if night == 2 { // a version to watch from night 3: the watch's state too
			for _, p := range []*r5Project{cached, full} {
				applyByHand(t, p.env, p.now, seqs[0].sig)
			}
		}
	}
	t.Logf("tasks taken up %d; the watch judged %d nights, %d from its state", taken, watched, watchResumed)
	if watched < 8 || watchResumed < 3 {
		t.Errorf("the watch judged %d nights, %d of them from its state: the test tests its state little", watched, watchResumed)
	}
	if taken == 0 {
		t.Error("no night took a task up from the state: the test tests nothing")
	}
}

// spoilPaths rewrites the project's states so that each log names another path (in turn from paths)
// and adds a log entry under the first log's name with that path: what a pull request could commit
// under weights/.cache. Keys and checks are kept.
func spoilPaths(t *testing.T, p *r5Project, paths []string) {
	t.Helper()
	dir := filepath.Join(p.env.WeightsDir, store.CacheDir)
	data, err := os.ReadFile(filepath.Join(dir, store.DetectStateFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState[detectState](data)
	if err != nil || len(st.Logs) == 0 {
		t.Fatalf("the detect state does not decode (%v) or holds no log", err)
	}
	extra := st.Logs[0]
	extra.Path = paths[0]
	st.Logs = append([]cachedLog{extra}, st.Logs...)
	for i := 1; i < len(st.Logs); i++ {
		st.Logs[i].Path = paths[i%len(paths)]
	}
	if data, err = encodeState(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.DetectStateFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(filepath.Join(dir, store.WatchStateFile)); err == nil {
		var ws watchState
		if err := json.Unmarshal(data, &ws); err == nil && len(ws.Logs) > 0 {
			for i := range ws.Logs {
				ws.Logs[i].Path = paths[i%len(paths)]
			}
			if data, err = encodeState(&ws); err == nil {
				_ = os.WriteFile(filepath.Join(dir, store.WatchStateFile), data, 0o644)
			}
		}
	}
}

// TestALaggingCopyIsCountedOnceThroughTheStates: a mirror that gets the log's tasks days late (a sync,
// a collector) holds, each night, tasks the log gave on nights the state does not read again. A night
// from the states checks its new tasks against the prints the states keep of every log's tasks, finds
// the repeats and reads whole: every night then decides as the log alone, and as a night without states
// (the copies review, F1: before, the states hid the repeats and the e-value was about squared).
func TestALaggingCopyIsCountedOnceThroughTheStates(t *testing.T) {
	once, cached, full := newR5Project(t), newR5Project(t), newR5Project(t)
	s := newR5Seq(41, r5Regime{base: 0.08, lifted: 0.6, deep: 0.6, days: 14})
	w := refWeights()
	const lag = 5
	var days [][]byte
	for d := range 14 {
		text := r5Render(s.day(d), w)
		days = append(days, text)
		for _, p := range []*r5Project{once, cached, full} {
			appendFile(t, p.log, text)
			p.now = r5Start.Add(time.Duration(d)*24*time.Hour + 20*time.Hour)
		}
		var outs [2][]byte
		var res [2]*NightlyResult
		for i, p := range []*r5Project{cached, full} {
			mirror := filepath.Join(p.dir, "mirror", ".ldd", "trace.log")
			if err := os.MkdirAll(filepath.Dir(mirror), 0o755); err != nil {
				t.Fatal(err)
			}
			if d >= lag {
				appendFile(t, mirror, days[d-lag])
			} else {
				appendFile(t, mirror, nil)
			}
			if p == full {
				if err := os.RemoveAll(filepath.Join(p.env.WeightsDir, store.CacheDir)); err != nil {
					t.Fatal(err)
				}
			}
			out, err := Nightly(p.env, EvolveOptions{Logs: []string{p.log, mirror}})
			if err != nil {
				t.Fatal(err)
			}
			res[i] = out
			o := *out
			o.TasksFromState = 0
			outs[i] = (&stateProject{dir: p.dir}).jsonOf(t, &o)
		}
		a := once.night(t)
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("day %d: the night from the states decided otherwise than the full read:\n%s\n%s", d, outs[0], outs[1])
		}
		if got := res[0].Explain.Accumulated; got.Eligible != a.Explain.Accumulated.Eligible || got.Flagged != a.Explain.Accumulated.Flagged {
			t.Fatalf("day %d: with the lagging mirror %d settled eligible, %d flagged; the log alone %d, %d",
				d, got.Eligible, got.Flagged, a.Explain.Accumulated.Eligible, a.Explain.Accumulated.Flagged)
		}
		if d > lag && res[0].TasksFromState != 0 {
			t.Errorf("day %d: %d task(s) taken up from a state although the logs repeat each other", d, res[0].TasksFromState)
		}
	}
}
