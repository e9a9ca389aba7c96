package app

import (
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/weights"
)

// ReplayResult is what tune replay reports (and its --json shape).
type ReplayResult struct {
	Weights      string        `json:"weights"`
	Scenarios    int           `json:"scenarios"`
	Loss         evolve.Num    `json:"suite_loss"`
	Total        int           `json:"total_loss"`
	Red          int           `json:"red"`
	Rows         []evolve.Row  `json:"rows"`
	Holdout      *ReplayResult `json:"holdout,omitempty"`
	HoldoutReads *int          `json:"holdout_reads,omitempty"`
}

func newReplayResult(name string, r evolve.Replay) *ReplayResult {
	return &ReplayResult{Weights: name, Scenarios: len(r.Rows), Loss: r.Loss, Total: r.Total, Red: r.Red, Rows: r.Rows}
}

// Replay scores the fixture suite under the weights file weightsFile ("": the active version) and, with
// holdout, the frozen holdout split too (the read is counted in the result).
func Replay(env Env, weightsFile string, holdout bool) (*ReplayResult, error) {
	var w weights.Weights
	var name string
	var err error
	if weightsFile != "" {
		w, err = weights.Load(weightsFile)
		name = weightsFile
	} else {
		w, _, err = env.ReadWeights()
		name = weights.VersionName(w.Version)
	}
	if err != nil {
		return nil, err
	}
	suite, err := env.LoadSuite()
	if err != nil {
		return nil, err
	}
	rep := newReplayResult(name, evolve.PrepareSuite(suite.Scenarios).Score(&w))
	if holdout {
		reads := 0
		if len(suite.Holdout) > 0 {
			rep.Holdout = newReplayResult(name, evolve.PrepareSuite(suite.Holdout).Score(&w))
			reads = 1
		}
		rep.HoldoutReads = &reads
	}
	return rep, nil
}
