// Command tune is the outer loop of the LDD thinking-levels scorer: it reads trace logs, proposes and
// measures weight changes, keeps a versioned weights store, and audits Claude Code transcripts.
package main

import (
	"os"

	"github.com/ldd-tools/tune/internal/cli"
)

func main() { os.Exit(cli.Main()) }
