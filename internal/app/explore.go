package app

import (
	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/explore"
	"github.com/ldd-tools/tune/internal/explore/compare"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// ExploreResult is tune explore's result (and its --json shape).
type ExploreResult struct {
	// Config is the project's [explore] table (margin with its default).
	Config explore.Config `json:"config"`
	Logs   []string       `json:"logs"`
	*compare.Result
	Lines    traceparse.LineCounts `json:"lines"`
	Warnings []evolve.Warning      `json:"warnings"`
}

// Explore is tune explore: the two recorded arms of the [explore] draw in the logs (the default log
// when none is given), compared per level edge (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
// It reads the logs once and writes nothing.
func Explore(env Env, logs []string) (*ExploreResult, error) {
	cfg, err := readConfig(env, "")
	if err != nil {
		return nil, err
	}
	// The arms do not depend on any weights (the draw recorded them); the detection only needs a
	// version to resolve the tasks with: the reference's, so no store is needed.
	active, err := weights.Parse(BuiltinLabel+" weights/v0001.toml", tune.ReferenceWeights)
	if err != nil {
		return nil, err
	}
	read, err := openTraceLogs(env, logs)
	if err != nil {
		return nil, err
	}
	res := compare.Compare(compare.Input{Stream: read.stream, Active: &active, Now: env.Now()})
	if read.err != nil {
		return nil, read.err
	}
	return &ExploreResult{Config: cfg.Explore.WithDefaults(), Logs: read.names, Result: res, Lines: read.lines,
		Warnings: evolve.UniqueWarnings(parseWarnings(read))}, nil
}
