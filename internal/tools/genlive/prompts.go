package genlive

import (
	"math/rand/v2"
	"strings"

	"github.com/ldd-tools/tune/internal/weights"
)

// Prompt texts are composed from a base and optional clauses, then scored by the real scorer: the
// signals a task records are whatever scorer.Detect finds in its text, never a label the generator
// attaches. Each clause carries exactly one signal's cue (prompts_test.go checks every base and clause
// in isolation), and the vocabulary avoids the scorer's other cues (layer terms, "new X", "when … does
// not", bumps), so a composed prompt carries the signals of its parts. The shapes follow the real prompts
// in testdata/ldd/parity.jsonl: an eligible (L0/L1) prompt is a bug fix ("fix", "failing", "broken",
// "off-by-one", "typo"), a bug fix in one named file, or a known-solution edit of one file
// (rename/move/remove, a line reference).

// area is a code area: the words a prompt names it by and the files a task there touches.
type area struct {
	name  string
	files []string
}

// spreadAreas are the code areas of an ordinary project (12 areas, 20 files).
var spreadAreas = []area{
	{"the checkout cart totals", []string{"src/checkout/cart.go", "src/checkout/cart_test.go"}},
	{"the invoice export", []string{"src/billing/export.go", "src/billing/export_test.go"}},
	{"the session refresh", []string{"src/auth/session.go", "src/auth/token.go"}},
	{"the search index rebuild", []string{"src/search/index.go"}},
	{"the weekly digest mail", []string{"src/notify/digest.go", "templates/digest.md"}},
	{"the admin audit page", []string{"web/admin/audit.tsx"}},
	{"the metrics labels", []string{"src/metrics/exporter.go"}},
	{"the config defaults", []string{"src/config/load.go", "config/defaults.yaml"}},
	{"the thumbnail worker", []string{"src/media/thumbs.go"}},
	{"the rate limit buckets", []string{"src/gateway/ratelimit.go", "src/gateway/ratelimit_test.go"}},
	{"the CSV import", []string{"src/importer/csv.go"}},
	{"the feature flag client", []string{"web/flags/client.ts"}},
}

// busyAreas are the two modules of the busy project: every task touches one of a few shared files.
var busyAreas = []area{
	{"the orders module", []string{"orders/handlers.py", "orders/models.py", "orders/tests.py"}},
	{"the payments module", []string{"payments/charge.py", "payments/refund.py", "payments/tests.py"}},
}

// Eligible bases: a bug-fix cue, optionally naming one file (then single-file fires too). %s is the area.
var bugfixBases = []string{
	"fix the failing test for %s",
	"%s is broken on empty input, fix it",
	"fix the off-by-one in %s",
	"fix the typo in the error message of %s",
	"%s returns the wrong total, please fix",
	"the retry in %s does not work for large files",
}

// knownEditBases are single-file edits without a bug-fix cue (a known-solution verb); they need a path.
var knownEditBases = []string{
	"rename the helper in %s",
	"remove the unused flag from %s",
	"move the constants to the top of %s",
}

// plainBases carry no signal: L2 under the reference weights.
var plainBases = []string{
	"add pagination to %s",
	"bump the retry default for %s and update the tests",
	"add a download button to %s",
	"improve the log messages of %s",
	"add a dry-run option to %s",
	"support a second currency in %s",
}

// clauses carry one positive signal each (appended to a base).
var clauses = map[weights.Signal][]string{
	weights.Ambiguous:       {"I'm not sure why", "maybe a race", "it started after my last change", "it fails somehow only in staging"},
	weights.ContractRuleHit: {"the response schema has to stay as it is", "keep the API surface unchanged", "the totals invariant has to hold"},
	weights.LayerCrossings:  {"the parser hands bad rows to the runner", "the scorer and the manager disagree on it"},
	weights.CrossLayer:      {"the change goes across the web and api tiers", "integrate it with the billing side"},
	weights.Greenfield:      {"redo it from scratch"},
	weights.Components:      {"with a new cache layer, a new job pipeline and a new audit store"},
}

// positiveSignals are the signals a clause can add, in a fixed order (map order is random).
var positiveSignals = []weights.Signal{weights.Ambiguous, weights.ContractRuleHit, weights.LayerCrossings,
	weights.CrossLayer, weights.Greenfield, weights.Components}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// compose joins a base and clauses into one prompt.
func compose(base string, extra []string) string {
	if len(extra) == 0 {
		return base
	}
	return base + "; " + strings.Join(extra, "; ")
}
