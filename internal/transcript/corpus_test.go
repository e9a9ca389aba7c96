package transcript

import (
	"os"
	"testing"
)

// TestCorpusIsNTimesTheSample checks the generated benchmark corpus (make corpus-transcripts): every
// copy has rewritten ids, so the totals must be exactly N times the sample's. It runs only when
// TUNE_CORPUS names the corpus directory, e.g.
//
//	make corpus-transcripts && TUNE_CORPUS=$PWD/corpus/transcripts go test -run Corpus ./internal/transcript
func TestCorpusIsNTimesTheSample(t *testing.T) {
	dir := os.Getenv("TUNE_CORPUS")
	if dir == "" {
		t.Skip("TUNE_CORPUS not set")
	}
	sample := scanOrFail(t, daily, spotterDir)
	corpus := scanOrFail(t, daily, dir)
	n := uint64(len(corpus.Files) / len(sample.Files))
	if n == 0 || len(corpus.Files)%len(sample.Files) != 0 {
		t.Fatalf("corpus has %d files, not a multiple of the sample's %d", len(corpus.Files), len(sample.Files))
	}
	s, c := sumTokens(sample.Requests), sumTokens(corpus.Requests)
	want := tokens{s.In * n, s.Out * n, s.CacheWrite * n, s.CacheRead * n}
	if c != want || uint64(len(corpus.Requests)) != n*uint64(len(sample.Requests)) {
		t.Errorf("corpus: %+v in %d requests, want %d × %+v in %d", c, len(corpus.Requests), n, s, len(sample.Requests))
	}
	if st, ct := sumThinking(sample.Requests), sumThinking(corpus.Requests); ct != n*st {
		t.Errorf("corpus thinking %d, want %d × %d", ct, n, st)
	}
	t.Logf("%d copies, %d files, %.0f MB, %d requests", n, len(corpus.Files), float64(corpus.Bytes)/1e6, len(corpus.Requests))
}

func sumThinking(rs []Request) uint64 {
	var n uint64
	for i := range rs {
		n += rs[i].ThinkingTokens
	}
	return n
}
