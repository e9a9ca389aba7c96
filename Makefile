# tune — build, test, benchmark and demo targets. `make test` is what CI runs (.ci/run).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/ldd-tools/tune/internal/cli.Version=$(VERSION)
BIN     := bin/tune

.PHONY: build test vet bench demo fuzz corpus clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tune

vet:
	$(GO) vet ./...

# The whole test suite: unit, golden, txtar end-to-end, and the fuzz seed corpora (run as plain tests).
test: vet
	$(GO) test -count=1 ./...

# Benchmarks; compare two runs with benchstat (go run golang.org/x/perf/cmd/benchstat old.txt new.txt).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt

# Short fuzz run of every fuzz target (FUZZTIME=1m for longer).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# A ~1 GB transcript corpus for the audit benchmark (60 id-rewritten copies of the real sample, so
# `tune audit corpus/transcripts` must report exactly 60× its totals). Never committed.
COPIES ?= 60
.PHONY: corpus-transcripts
corpus-transcripts:
	rm -rf corpus/transcripts
	$(GO) run ./internal/tools/gencorpus -copies $(COPIES) -out corpus/transcripts testdata/transcripts/spotter/test/fixtures/transcripts

clean:
	rm -rf bin bench.txt

# One chart of each kind, and every chart of the sample reports, as PNG for looking at (axes labelled,
# legend present, no overlapping labels). Reports use the SVG form; these PNGs are never committed.
CHARTS_DIR ?= bin/charts
.PHONY: charts
charts:
	TUNE_CHARTS_DIR=$(abspath $(CHARTS_DIR)) $(GO) test -count=1 -run '^TestChartsPNG$$' ./internal/report/
	ls $(CHARTS_DIR)/*.png
