package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

// TestTablesFitTerminal renders the outputs that have a full-width golden file again at each of
// testutil.TermWidths, as $COLUMNS asks: no line may be wider, and each narrow layout is a golden of
// its own (docs/decisions.md#table-width).
func TestTablesFitTerminal(t *testing.T) {
	t.Run("history", func(t *testing.T) {
		wd, fd := storeTestDirs(t)
		fitRun(t, "store_history_fresh.txt", func(env map[string]string) (int, string, string) {
			return storeRun(t, wd, fd, env, "history")
		}, "| v0001 *")
		storeHistoryFixture(t, wd, fd)
		fitRun(t, "store_history.txt", func(env map[string]string) (int, string, string) {
			return storeRun(t, wd, fd, env, "history")
		}, "| greenfield +1 ", "| ambiguous +1 ", "| restores v0001: ambiguous -1 |", "| propose-attempt |")
		fitRun(t, "store_diff.txt", func(env map[string]string) (int, string, string) {
			return storeRun(t, wd, fd, env, "diff", "v0001", "v0002")
		}, "| ambiguous | 2 → 3     | +1 |")
	})
	t.Run("trace", func(t *testing.T) {
		for name, log := range map[string]string{
			"trace_table.txt":        "../../testdata/ldd/traces/e2e-demos__v013x__merged-view.log",
			"trace_messy_stdout.txt": "testdata/trace_messy.log",
		} {
			fitRun(t, name, func(env map[string]string) (int, string, string) {
				return traceCLIEnv(t, env, "trace", log)
			}, "| L")
		}
	})
	t.Run("evolve", func(t *testing.T) {
		e := newEvolveEnv(t)
		same := filepath.Base(e.history("same-area", 2))
		legacy := filepath.Base(e.history("legacy-v0101", 4))
		for _, c := range []struct {
			name string
			args []string
			keys []string
		}{
			{"evolve_detect_same_area.txt", []string{"detect", same}, []string{"| layer-crossings ", "| candidate ", "| unknown-file-territory |"}},
			{"evolve_replay_holdout.txt", []string{"replay", "--holdout"}, []string{"| override-natural-language ", "| edge-L0-upper-minus7 "}},
			// the first run writes the proposal, the narrow ones find it pending
			{"evolve_propose_legacy.txt", []string{"propose", legacy}, []string{"| ambiguous ", "| candidate "}},
		} {
			fitRun(t, c.name, func(env map[string]string) (int, string, string) {
				e.env = env
				return e.runInRoot(c.args...)
			}, c.keys...)
		}
	})
	t.Run("accuracy", func(t *testing.T) {
		fitRun(t, "accuracy_quirks.txt", func(env map[string]string) (int, string, string) {
			return accuracyCLIEnv(t, env, "accuracy", "--days", "36500", "../accuracy/testdata/quirks.log")
		}, "| L0 ", "| L4 ")
	})
	// cliEnv runs tune with env added to an empty environment.
	cliEnv := func(env map[string]string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
		code := Run(f, args)
		return code, out.String(), errOut.String()
	}
	t.Run("audit", func(t *testing.T) {
		fitRun(t, "audit_by_model.txt", func(env map[string]string) (int, string, string) {
			return cliEnv(env, "audit", "--timezone", "UTC", "--by", "model", "../../testdata/transcripts/spotter")
		}, "| opus-4-6 ", "| haiku-4-5 ", "| sonnet-4-5 ")
	})
	t.Run("effort", func(t *testing.T) {
		fitRun(t, "effort_demo.txt", func(env map[string]string) (int, string, string) {
			return cliEnv(env, "effort", "--repo", "../../testdata/effort-demo/repo", "../../testdata/effort-demo/transcripts")
		}, "| medium  ", "| unknown ", "| effort-medium ", "| verifier ", "| not re-asserted |")
	})
	t.Run("watch", func(t *testing.T) {
		dir, log := watchStore(t), watchLog(t, 20, 0)
		fitRun(t, "watch_holding.txt", func(env map[string]string) (int, string, string) {
			return watchCLIEnv(t, dir, env, "watch", log)
		}, "| not helping ")
		// At 80 columns the table keeps every column whole: no measure name is cut.
		if _, out, _ := watchCLIEnv(t, dir, map[string]string{"COLUMNS": "80"}, "watch", log); strings.Contains(out, "…") {
			t.Errorf("watch at 80 columns cuts a cell:\n%s", out)
		}
	})
	t.Run("nightly", func(t *testing.T) {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		fitRun(t, "nightly_twostep.txt", func(env map[string]string) (int, string, string) {
			dir, f, out, errOut := nightlyFixture(t) // a fresh store each time: every run writes its proposal
			getenv := f.Getenv
			f.Getenv = func(k string) string {
				if v, ok := env[k]; ok {
					return v
				}
				return getenv(k)
			}
			if err := os.Chdir(dir); err != nil {
				t.Fatal(err)
			}
			defer os.Chdir(wd) //nolint:errcheck // back to the package dir for the golden files
			code := runNightly(f, "twostep.log")
			return code, out.String(), errOut.String()
		}, "| layer-crossings +2 | accept ")
	})
}

// fitRun runs one command at full width (compared with the golden name) and at each terminal width,
// where each of keys (the cells of the table's key columns: the change, the verdict, the scenario)
// must be printed whole.
func fitRun(t *testing.T, name string, run func(env map[string]string) (int, string, string), keys ...string) {
	t.Helper()
	code, out, errOut := run(nil)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", name, code, errOut)
	}
	testutil.Golden(t, name, []byte(out))
	for _, w := range testutil.TermWidths {
		code, out, errOut := run(map[string]string{"COLUMNS": strconv.Itoa(w)})
		if code != 0 {
			t.Fatalf("%s at %d: exit %d: %s", name, w, code, errOut)
		}
		testutil.GoldenFit(t, name, w, []byte(out))
		for _, k := range keys {
			if !strings.Contains(out, k) {
				t.Errorf("%s at %d columns: the key cell %q is not whole:\n%s", name, w, k, out)
			}
		}
	}
}
