// Command tune is the outer loop of the LDD thinking-levels scorer: it reads trace logs, proposes and
// measures weight changes, keeps a versioned weights store, and audits Claude Code transcripts.
//
// This is the light front end: `tune score`, which agents call once per task, runs here without the
// start-up cost of the plotting stack; every other command runs in tune-full, installed next to it
// (see internal/front and docs/decisions.md#score-start-up).
package main

import (
	"os"

	"github.com/ldd-tools/tune/internal/front"
)

func main() {
	args := os.Args[1:]
	if front.Wants(args) {
		os.Exit(front.Score(args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(front.Exec(args, os.Stderr))
}
