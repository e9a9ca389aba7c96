// Command tune is the outer loop of the LDD thinking-levels scorer: it reads trace logs, proposes and
// measures weight changes, keeps a versioned weights store, and audits Claude Code transcripts.
//
// This is the light front end: `tune score`, which agents call once per task, and the JSON of whole
// trace logs (`tune trace --format jsonl LOG`), which pipelines run, run here without the start-up cost
// of the plotting stack; every other command runs in tune-full, installed next to it (see
// internal/front and docs/decisions.md#score-start-up).
package main

import (
	"os"

	"github.com/ldd-tools/tune/internal/front"
	"github.com/ldd-tools/tune/internal/textfmt"
)

func main() {
	args := os.Args[1:]
	// the same gate as tune-full's streams (internal/iostreams): control characters a log or a prompt
	// carries are shown escaped, so both front ends print the same bytes
	out, errOut := textfmt.TerminalWriter(os.Stdout), textfmt.TerminalWriter(os.Stderr)
	switch front.Wants(args) {
	case "score":
		os.Exit(front.Score(args, os.Stdin, out, errOut, os.Getenv))
	case "trace":
		if code, ran := front.Trace(args, os.Stdin, out, errOut, os.Getenv); ran {
			os.Exit(code)
		}
	}
	os.Exit(front.Exec(args, os.Stderr))
}
