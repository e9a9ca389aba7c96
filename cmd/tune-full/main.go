// Command tune-full is every tune command in one binary. The `tune` front end (cmd/tune) runs
// `tune score` itself and executes this binary for everything else; it can also be run directly.
package main

import (
	"os"

	"github.com/ldd-tools/tune/internal/cli"
)

func main() { os.Exit(cli.Main()) }
