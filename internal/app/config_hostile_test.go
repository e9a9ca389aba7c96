package app

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/weights"
)

// tune.toml is PR-controlled: NaN and ±Inf are refused (NaN passed the old 0..2 check and turned the
// parity price off), and a FIFO, a link to /dev/zero, an oversized file or a nesting bomb is refused
// without hanging or taking memory (docs/decisions.md#hostile-files-issue-25).
func TestConfigRefusesHostileValuesAndFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tune.toml")
	load := func() error {
		done := make(chan error, 1)
		go func() { _, err := readConfig(Env{Config: path}, ""); done <- err }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s hangs", path)
			return nil
		}
	}
	write := func(body string) {
		os.Remove(path)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for body, want := range map[string]string{
		"[evolve]\nparity_budget = nan\n":                                               "tune.toml:2: evolve.parity_budget must lie between 0 and 2",
		"[evolve]\nparity_budget = +inf\n":                                              "evolve.parity_budget must lie between 0 and 2",
		"[watch]\nalpha = nan\n":                                                        "tune.toml:2: watch.alpha NaN",
		"[watch]\noverkill_bound = -nan\n":                                              "tune.toml:2: watch.overkill_bound NaN",
		"[watch]\nalpha = inf\n":                                                        "watch.alpha +Inf",
		"[evolve.drift_acknowledged]\nlayer-crossings = nan\n":                          `tune.toml:2: evolve.drift_acknowledged."layer-crossings": NaN is outside the sane range`,
		"[evolve.drift_acknowledged]\nlayer-crossings = 4.25\n":                         `tune.toml:2: evolve.drift_acknowledged."layer-crossings": 4.25 is not a multiple of 0.5`,
		"[evolve.drift_acknowledged]\nlayer-crossings = 1e300\n":                        "tune.toml:2: evolve.drift_acknowledged.\"layer-crossings\": 1e+300 is outside the sane range -100..+100",
		"[evolve.drift_acknowledged]\n\"../v0001.toml\" = 4\n":                          `"../v0001.toml" is not a knob (a signal: greenfield,`,
		"[evolve.drift_acknowledged]\n\"L9 edge\" = 4\n":                                `or an edge: L0 edge,`,
		"[evolve]\ndrift_acknowledged = \"layer-crossings\"\n":                          "evolve.drift_acknowledged is a string: want a table",
		"[evolve.drift_acknowledged]\n\"\" = 4\n":                                       `"" is not a knob`,
		"[evolve.drift_acknowledged]\nlayer-crossings = \"4\"\n":                        `evolve.drift_acknowledged."layer-crossings" is a string: want the weight`,
		"[evolve.drift_acknowledged]\nlayer-crossings = [4]\n":                          `evolve.drift_acknowledged."layer-crossings" is an array`,
		"y = " + strings.Repeat("{a=", 20000) + "1" + strings.Repeat("}", 20000) + "\n": "a config file (tune.toml) holds at most 64 KiB",
		"y = " + strings.Repeat("{a=", 1000) + "1" + strings.Repeat("}", 1000) + "\n":   "nested 17 deep",
	} {
		write(body)
		if err := load(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.30q: %v, want %q", body, err, want)
		}
	}
	// Every TOML spelling of the table reads the same acknowledgements (the review found dotted keys
	// refused with a garbled message).
	for _, body := range []string{
		"[evolve.drift_acknowledged]\nlayer-crossings = 4\n\"L1 edge\" = 3.5\n",
		"[evolve]\ndrift_acknowledged.layer-crossings = 4\ndrift_acknowledged.\"L1 edge\" = 3.5\n",
		"evolve.drift_acknowledged = { layer-crossings = 4, \"L1 edge\" = 3.5 }\n",
	} {
		write(body)
		cfg, err := readConfig(Env{Config: path}, "")
		want := evolve.DriftAcks{"layer-crossings": weights.Whole(4), "L1 edge": weights.Half(7)}
		if err != nil || !maps.Equal(cfg.driftAcks, want) {
			t.Errorf("%q: %v, %v; want %v", body, err, cfg.driftAcks, want)
		}
	}
	// linkTo makes tune.toml a link to a file holding body (a device when body is "").
	linkTo := func(target, body string) {
		if body != "" {
			target = filepath.Join(t.TempDir(), target)
			if err := os.WriteFile(target, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		os.Remove(path)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	linkTo("/dev/zero", "")
	if err := load(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link to /dev/zero: %v", err)
	}
	// The project's tune.toml is never read through a link: a link to a secret (here a file outside
	// the project holding a token) would be quoted by the TOML error into a CI log (the ninth review).
	// A file the user names may be one.
	linkTo("environ", "GH_TOKEN=ghs_SECRET\n")
	if err := load(); err == nil || strings.Contains(err.Error(), "ghs") || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("the project's tune.toml linked to a secret: %v", err)
	}
	linkTo("shared.toml", "[evolve]\nmax_steps = 3\n")
	if cfg, err := readConfig(Env{Config: filepath.Join(dir, "unused.toml")}, path); err != nil || cfg.Evolve.MaxSteps != 3 {
		t.Errorf("--config naming a link: %v %+v", err, cfg.Evolve)
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := load(); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("a FIFO: %v", err)
	}
}

// FuzzParseConfig: the config parser never panics, and what it accepts is in range (NaN and ±Inf never
// pass). Seeds: the bomb and the NaN values of the issue, in testdata/fuzz/FuzzParseConfig too.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("[evolve]\nmax_steps = 3\nparity_budget = 0.03\n[watch]\nalpha = 0.05\n"))
	f.Add([]byte("[evolve]\nparity_budget = nan\n[watch]\nalpha = -inf\n"))
	f.Add([]byte("[evolve]\nholdout = \"priced\"\n"))
	f.Add([]byte("[evolve.drift_acknowledged]\nlayer-crossings = 4\n\"L1 edge\" = 3.5\n"))
	f.Add([]byte("y = " + strings.Repeat("{a=", 500) + "1" + strings.Repeat("}", 500) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseConfig("fuzz.toml", data)
		if err != nil {
			return
		}
		if !(cfg.Evolve.ParityBudget >= 0 && cfg.Evolve.ParityBudget <= 2) || !(cfg.Watch.Alpha >= 0 && cfg.Watch.Alpha < 1) ||
			!(cfg.Watch.OverkillBound >= 0 && cfg.Watch.OverkillBound <= 1) || cfg.Evolve.MaxSteps < 0 || cfg.Evolve.StallBound < 0 ||
			!slices.Contains([]evolve.HoldoutRule{"", evolve.HoldoutVeto, evolve.HoldoutPriced}, cfg.Evolve.Holdout) {
			t.Fatalf("accepted out of range: %+v", cfg)
		}
		for k := range cfg.driftAcks {
			if !slices.Contains(evolve.KnobNames(), k) {
				t.Fatalf("accepted a knob that is none: %q", k)
			}
		}
	})
}
