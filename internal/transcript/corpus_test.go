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
	// The same through a Sink, as tune audit reads it: requests as their session groups complete.
	var streamed tokenSink
	scanOrFail(t, Options{Sink: &streamed}, dir)
	if streamed.sum != c || streamed.requests != len(corpus.Requests) || streamed.thinking != sumThinking(corpus.Requests) {
		t.Errorf("streamed: %+v in %d requests, %d thinking; held: %+v in %d", streamed.sum, streamed.requests, streamed.thinking, c, len(corpus.Requests))
	}
	t.Logf("%d copies, %d files, %.0f MB, %d requests", n, len(corpus.Files), float64(corpus.Bytes)/1e6, len(corpus.Requests))
}

// tokenSink sums what a Sink is given, taking retractions back.
type tokenSink struct {
	sum      tokens
	thinking uint64
	requests int
}

func (s *tokenSink) Add(r *Request) { s.count(r, 1) }

func (s *tokenSink) Remove(r *Request) { s.count(r, -1) }

func (s *tokenSink) count(r *Request, sign int) {
	n := uint64(sign)
	s.requests += sign
	s.sum.In += n * r.InputTokens
	s.sum.Out += n * r.OutputTokens
	s.sum.CacheWrite += n * r.CacheCreationTokens
	s.sum.CacheRead += n * r.CacheReadTokens
	s.thinking += n * r.ThinkingTokens
}

func sumThinking(rs []Request) uint64 {
	var n uint64
	for i := range rs {
		n += rs[i].ThinkingTokens
	}
	return n
}
