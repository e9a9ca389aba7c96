# tune — build, test, benchmark and demo targets. `make test` is what CI runs (.ci/run).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/ldd-tools/tune/internal/cli.Version=$(VERSION)
BIN     := bin/tune

.PHONY: build install test vet fmt-check staticcheck race lint bench demo fuzz corpus clean

# Two binaries: bin/tune runs `tune score` itself (no plotting stack to initialise) and hands every
# other command to bin/tune-full next to it (docs/decisions.md#score-start-up). Both are built without
# cgo: nothing in tune needs it (only net's DNS resolver would, linked through pflag), and a static
# binary starts without the dynamic loader and libc, a third of `tune score`'s process time.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tune
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-full ./cmd/tune-full

# Both binaries into $(PREFIX)/bin (default ~/.local/bin), side by side as bin/tune needs them; that
# directory must be on PATH.
PREFIX ?= $(HOME)/.local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(BIN)-full $(DESTDIR)$(PREFIX)/bin/

vet:
	$(GO) vet ./...

# gofmt -l must list nothing.
fmt-check:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path './bin/*' -not -path './corpus/*')); \
	if [ -n "$$out" ]; then echo "gofmt -l lists:"; echo "$$out"; exit 1; fi

# staticcheck at a pinned version (honnef.co/go/tools; v0.8.2 builds with go1.26), installed into
# GOPATH/bin by .ci/staticcheck when that version is not there yet.
STATICCHECK_VERSION ?= v0.8.2
staticcheck:
	@STATICCHECK_VERSION=$(STATICCHECK_VERSION) GO=$(GO) sh .ci/staticcheck ./...

# The race detector on the packages that run goroutines (the parallel trace parser, the transcript
# scanner); on everything it would double the suite's time for packages that have no concurrency.
RACE_PKGS := ./internal/traceparse/ ./internal/transcript/
race:
	$(GO) test -count=1 -race $(RACE_PKGS)

# deadcode at a pinned version (golang.org/x/tools; v0.52.0 builds with go1.26) on both binaries: it
# must list nothing; installed into GOPATH/bin by .ci/deadcode when that version is not there yet.
DEADCODE_VERSION ?= v0.52.0
.PHONY: deadcode
deadcode:
	@DEADCODE_VERSION=$(DEADCODE_VERSION) GO=$(GO) sh .ci/deadcode ./cmd/tune ./cmd/tune-full

lint: fmt-check vet staticcheck deadcode

# The whole test suite: unit, golden, txtar end-to-end, and the fuzz seed corpora (run as plain tests),
# after gofmt, vet and staticcheck, then the race detector on the concurrent packages.
test: lint
	$(GO) test -count=1 ./...
	$(MAKE) --no-print-directory race

# Benchmarks; compare two runs with benchstat (go run golang.org/x/perf/cmd/benchstat old.txt new.txt).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt

# Whole processes: `tune trace --last 0 --format jsonl` next to `cat` on generated logs of each size (and
# the reference reader when TUNE_BENCH_REFERENCE holds its command line), with CPU time and peak RSS;
# the ratios: benchstat -col /cmd bench-trace.txt (docs/decisions.md#streaming-reads).
TRACE_SIZES ?= 16MB,256MB,1GB
.PHONY: bench-trace
bench-trace:
	$(GO) test ./internal/front -run '^$$' -bench TraceProcess -trace-sizes $(TRACE_SIZES) -count 6 | tee bench-trace.txt

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

# A 300 MB synthetic trace log and a 1 MB one ending with the same 20 tasks, to time tail reads:
#   time bin/tune trace --last 20 corpus/trace-300mb.log  vs  corpus/trace-1mb.log. Never committed.
.PHONY: corpus-trace
corpus-trace:
	$(GO) run ./internal/traceparse/cmd/gentrace -size 300MB -o corpus/trace-300mb.log
	$(GO) run ./internal/traceparse/cmd/gentrace -size 1MB -o corpus/trace-1mb.log

# The main job on bundled demo data, in a scratch copy of the store (bin/demo): the nightly run over the
# demo trace logs (detect, propose, replay, decide, report), then the transcript audit of the bundled
# Claude Code transcripts. Exit code 3 (escalation) would still show its output.
DEMO := bin/demo
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO) && cp -r weights fixtures $(DEMO)/ && ln -s ../../demo ../../testdata $(DEMO)/
	@echo '$$ tune nightly --logs "demo/traces/*.log"'
	@cd $(DEMO) && TUNE_NOW=2026-12-01T03:00:00Z ../tune nightly --logs 'demo/traces/*.log'; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 3 ]
	@echo; echo '$$ tune diff v0001 <proposal> --format markdown'
	@cd $(DEMO) && ../tune diff v0001 weights/proposals/*.json --format markdown
	@echo; echo '$$ tune audit testdata/transcripts/spotter'
	@cd $(DEMO) && ../tune audit testdata/transcripts/spotter
	@echo; echo "Reports and the pending proposal are in $(DEMO)/reports and $(DEMO)/weights/proposals."

clean:
	rm -rf bin bench.txt bench-trace.txt

# One chart of each kind, every chart of the sample reports and of the README excerpts, as PNG for looking at (axes labelled,
# legend present, no overlapping labels). Reports use the SVG form; these PNGs are never committed.
CHARTS_DIR ?= bin/charts
.PHONY: charts
charts:
	TUNE_CHARTS_DIR=$(abspath $(CHARTS_DIR)) $(GO) test -count=1 -run '^(TestChartsPNG|TestReportExcerpts)$$' ./internal/report/ ./internal/cli/
	ls $(CHARTS_DIR)/*.png
