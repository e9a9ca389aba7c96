package traceparse

import "github.com/ldd-tools/tune/internal/weights"

// ParseSignals reads a meta signals= field, "name:±w,…". Like the reference aggregator it splits on
// "," and then on the LAST ":" (so "components>=3:+2" works); unlike it, weights may be halves
// ("+2.5") and every malformed pair is reported in problems instead of dropped silently. A later
// duplicate name updates the earlier one in place. Known names are given in their reference spelling
// (the docs' "components≥3" becomes "components>=3"); unknown names are kept and reported.
// The result is never nil, so a present but empty field reads as an empty list.
func ParseSignals(raw string) (sigs []weights.SignalWeight, problems []string) {
	return appendSignals([]weights.SignalWeight{}, raw)
}

// SkippedWarnings returns the warnings of skipped lines (blank and comment lines have none).
func (r *Result) SkippedWarnings() []Warning {
	var out []Warning
	for _, w := range r.Warnings {
		if w.Skipped {
			out = append(out, w)
		}
	}
	return out
}

// splitPOSIX appends the tokens of s to out.
func splitPOSIX(s string, out []string) ([]string, error) {
	var a arena
	a.reserve(2 * len(s))
	a.WriteString(s)
	spans, err := tokenize(s, 0, &a, 0, nil)
	if err != nil {
		return out, err
	}
	text := a.String()
	for _, sp := range spans {
		out = append(out, text[sp.start:sp.end])
	}
	return out, nil
}

// ReadLogs reads the last n tasks (n <= 0: all) of each log and concatenates the results in the
// order given. Each task keeps its Source.
func ReadLogs(paths []string, n int, opts ...Option) (*Result, error) {
	all := &Result{Tasks: []Task{}, Warnings: []Warning{}}
	for _, path := range paths {
		res, err := ReadLast(path, n, opts...)
		if err != nil {
			return nil, err
		}
		all.Tasks = append(all.Tasks, res.Tasks...)
		all.Lines.Add(res.Lines)
		all.Warnings = append(all.Warnings, res.Warnings...)
		all.Tails = append(all.Tails, res.Tails...)
	}
	return all, nil
}
