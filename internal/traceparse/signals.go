package traceparse

import (
	"fmt"
	"strings"

	"github.com/ldd-tools/tune/internal/weights"
)

// appendSignals appends the pairs of raw to sigs (whose existing pairs it may update).
func appendSignals(sigs []weights.SignalWeight, raw string) ([]weights.SignalWeight, []string) {
	var problems []string
	for pair := range strings.SplitSeq(raw, ",") {
		pair = trimPy(pair)
		if pair == "" {
			continue
		}
		i := strings.LastIndexByte(pair, ':')
		if i < 0 {
			problems = append(problems, fmt.Sprintf("signals: %q has no :weight, ignored", pair))
			continue
		}
		name, weight := trimPy(pair[:i]), trimPy(pair[i+1:])
		w, err := weights.ParseHalf(weight)
		if err != nil || name == "" {
			problems = append(problems, fmt.Sprintf("signals: %q is not name:±weight (weights are multiples of 0.5), ignored", pair))
			continue
		}
		if s, ok := weights.SignalByName(name); ok {
			name = s.String()
		} else {
			problems = append(problems, fmt.Sprintf("signals: %q is not a scorer signal", name))
		}
		replaced := false
		for j := range sigs {
			if sigs[j].Name == name {
				sigs[j].Weight, replaced = w, true
			}
		}
		if !replaced {
			sigs = append(sigs, weights.SignalWeight{Name: name, Weight: w})
		}
	}
	return sigs, problems
}
