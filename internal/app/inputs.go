package app

import (
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/weights"
)

// stepInputs are what a detection and an evolution step (propose, evolve, nightly) read before they
// decide anything: the active weights with the resolver of the versions meta lines name, the fixture
// suite (a step only), the trace logs (opened; a detection streams them) and the decisions of the evolution log.
type stepInputs struct {
	active   weights.Weights
	resolver func(string) (*weights.Weights, bool)
	suite    fixtures.Suite
	read     *traceLogs
	dec      Decisions
}

// readStepInputs reads them in that order; the first failure is the error. The one difference is
// explicit in step: a detection writes nothing, so outside a project it uses the built-in reference
// weights (Env.ReadWeights) and reads no suite; a step measures a proposal on the fixture suite and
// writes it against the store, so it needs the store's active version (activeWeights).
func readStepInputs(env Env, logs []string, step bool) (*stepInputs, error) {
	in := &stepInputs{}
	var err error
	if step {
		in.active, in.resolver, err = activeWeights(env.WeightsDir, env.reads)
	} else {
		in.active, in.resolver, err = env.ReadWeights()
	}
	if err != nil {
		return nil, err
	}
	if step {
		if in.suite, err = env.LoadSuite(); err != nil {
			return nil, err
		}
	}
	if in.read, err = openTraceLogs(env, logs); err != nil {
		return nil, err
	}
	if in.dec, err = loadDecisions(env.WeightsDir, env.reads, in.resolver); err != nil {
		return nil, err
	}
	return in, nil
}
