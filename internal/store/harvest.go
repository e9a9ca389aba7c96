package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/ldd-tools/tune/internal/weights"
)

// HarvestDir is the sub-directory of the fixtures directory that apply writes harvested scenarios to.
const HarvestDir = "harvested"

// harvestScenario is one [[scenario]] in the fixture format of internal/fixtures (name, prompt, history,
// levels, dispatch_source, creativity, top2, fragment, origin). Only the fields a harvested task can fill
// are declared; the rest stay absent, which the fixture reader treats as "not checked".
type harvestScenario struct {
	Name           string   `toml:"name"`
	Prompt         string   `toml:"prompt"`
	Levels         []string `toml:"levels"`
	DispatchSource string   `toml:"dispatch_source"`
	Origin         string   `toml:"origin"`
}

type harvestFile struct {
	Scenario []harvestScenario `toml:"scenario"`
}

// harvestWrite is one fixture file apply will create.
type harvestWrite struct {
	Path    string
	Content []byte
}

// harvestFixtures turns each flagged task with a prompt into a fixture whose expected level is one above
// the level it was dispatched at (SPEC evolution item 10). Tasks without a prompt, or at L4 already, are
// skipped: there is nothing to replay or nothing above.
func harvestFixtures(fixturesDir string, p *Proposal, version int) ([]harvestWrite, error) {
	if fixturesDir == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(fixturesDir)
	if err != nil {
		return nil, err
	}
	var out []harvestWrite
	for _, t := range p.Evidence {
		if strings.TrimSpace(t.Prompt) == "" {
			continue
		}
		got, err := weights.ParseLevel(t.Level)
		if err != nil || got >= weights.L4 {
			continue
		}
		want := got + 1
		label := t.Title
		if label == "" {
			label = firstWords(t.Prompt, 8)
		}
		kinds := strings.Join(t.Evidence, ", ")
		if kinds == "" {
			kinds = "flagged"
		}
		sc := harvestScenario{
			Name:           fmt.Sprintf("harvested %s: %s", t.MetaTimestamp, label),
			Prompt:         t.Prompt,
			Levels:         []string{want.String()},
			DispatchSource: "auto-level",
			Origin: fmt.Sprintf("harvested by tune apply of %s as %s: task %s in %s, dispatched %s, low-side regression (%s); expected one level above",
				p.ID, weights.VersionName(version), t.MetaTimestamp, t.Source, t.Level, kinds),
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Harvested fixture: a task that was dispatched too low and regressed.\n# Written by tune apply (%s, %s); edit freely, it is not part of the weights store.\n\n", p.ID, weights.VersionName(version))
		if err := toml.NewEncoder(&b).Encode(harvestFile{Scenario: []harvestScenario{sc}}); err != nil {
			return nil, err
		}
		name := "h-" + fileSHA([]byte(t.Source + "\n" + t.MetaTimestamp + "\n" + t.Prompt))[:12] + ".toml"
		out = append(out, harvestWrite{Path: filepath.Join(abs, HarvestDir, name), Content: b.Bytes()})
	}
	return out, nil
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = append(f[:n], "…")
	}
	return strings.Join(f, " ")
}
