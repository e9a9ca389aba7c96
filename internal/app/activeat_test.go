package app

import "github.com/ldd-tools/tune/internal/weights"

// activeAt is the active weights of the store at dir, read fresh, with the resolver of its versions.
func activeAt(dir string) (weights.Weights, func(string) (*weights.Weights, bool), error) {
	return activeWeights(dir, nil)
}
