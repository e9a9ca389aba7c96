package store

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/weights"
)

// HarvestDir is the sub-directory of the fixtures directory that apply writes harvested scenarios to.
const HarvestDir = fixtures.HarvestedDir

// harvestWrite is one fixture file apply will create.
type harvestWrite struct {
	Path    string
	Content []byte
}

// harvestFixtures turns each flagged task with a prompt into a fixture whose expected level is one above
// the level it was dispatched at (docs/decisions.md#evolution-step, rule 10). Tasks without a prompt, or at L4 already, are
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
		label := t.Title
		if label == "" {
			label = firstWords(t.Prompt, 8)
		}
		kinds := strings.Join(t.Evidence, ", ")
		if kinds == "" {
			kinds = "flagged"
		}
		origin := fmt.Sprintf("harvested by tune apply of %s as %s: task %s in %s, dispatched %s, low-side regression (%s); expected one level above",
			p.ID, weights.VersionName(version), t.MetaTimestamp, t.Source, t.Level, kinds)
		// The file is named by the task's log, stamp and prompt; the scenario by that name too. A stamp and
		// title alone repeat across logs (projects that record on the hour), and two scenarios of one
		// name stop every replay after the apply (the review of the reports and fixtures).
		id := "h-" + fileSHA([]byte(t.Source + "\n" + t.MetaTimestamp + "\n" + t.Prompt))[:12]
		sc := fixtures.HarvestScenario(fmt.Sprintf("harvested %s: %s (%s)", t.MetaTimestamp, label, id), t.Prompt, got, origin)
		header := fmt.Sprintf("Harvested fixture: a task dispatched at %s that regressed.\nWritten by tune apply (%s, %s); edit freely, it is not part of the weights store.", t.Level, p.ID, weights.VersionName(version))
		data := fixtures.Marshal(header, []fixtures.Scenario{sc})
		if _, err := fixtures.Parse("harvested", data); err != nil {
			return nil, fmt.Errorf("internal error: a harvested fixture does not parse: %w", err)
		}
		out = append(out, harvestWrite{Path: filepath.Join(abs, HarvestDir, id+".toml"), Content: data})
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
