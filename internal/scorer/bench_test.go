package scorer

import (
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// BenchmarkScore scores every parity prompt from its text (Detect + Score). One op is the whole corpus;
// ns/prompt is the figure to compare with the reference's ~300 µs per prompt.
func BenchmarkScore(b *testing.B) {
	recs := loadParity(b)
	w := referenceWeights(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, r := range recs {
			_ = Score(r.Prompt, r.History, w)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/prompt")
}

// candidateWeights is a re-weighting as replay would try it: one signal +1, one edge moved.
func candidateWeights(b *testing.B) *weights.Weights {
	w := *referenceWeights(b)
	w.Version = 2
	w.Signals[weights.Ambiguous] += weights.Whole(1)
	w.Buckets.Edges[weights.L1] -= 1
	return &w
}

// detectedCorpus detects every parity prompt once, as replay does before trying weights.
func detectedCorpus(b *testing.B) []Detection {
	recs := loadParity(b)
	dets := make([]Detection, len(recs))
	for i, r := range recs {
		dets[i] = Detect(r.Prompt, r.History)
	}
	return dets
}

// BenchmarkReweight re-scores already-detected prompts under new weights with Detection.Score (the full
// Result, header included).
func BenchmarkReweight(b *testing.B) {
	dets, w := detectedCorpus(b), candidateWeights(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i := range dets {
			_ = dets[i].Score(w)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dets)), "ns/prompt")
}

// BenchmarkReweightLevels is the numeric core replay needs (raw score, auto and final level).
func BenchmarkReweightLevels(b *testing.B) {
	dets, w := detectedCorpus(b), candidateWeights(b)
	b.ReportAllocs()
	b.ResetTimer()
	var sink weights.Level
	for b.Loop() {
		for i := range dets {
			_, _, final, _ := dets[i].Levels(w)
			sink += final
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dets)), "ns/prompt")
	_ = sink
}
