// Command genhistory prints a synthetic .ldd/trace.log history (see docs/synthetic-histories.md).
//
//	go run ./internal/tools/genhistory/cmd/genhistory -case phase3-gate -seed 7 > trace.log
//	go run ./internal/tools/genhistory/cmd/genhistory -list
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

func main() {
	name := flag.String("case", "phase3-gate", "history `case` to generate (-list shows them)")
	seed := flag.Uint64("seed", 1, "seed that varies filler tasks, positions and losses")
	wpath := flag.String("weights", "weights/v0001.toml", "weights `file` whose values are written into signals=")
	list := flag.Bool("list", false, "list the cases and exit")
	expect := flag.Bool("expect", false, "print the expected flagged task indices to stderr")
	flag.Parse()
	if *list {
		for _, c := range genhistory.Cases() {
			fmt.Printf("%-22s %s\n", c.Name, c.Doc)
		}
		return
	}
	c, ok := genhistory.CaseByName(*name)
	if !ok {
		fmt.Fprintf(os.Stderr, "genhistory: unknown case %q (use -list)\n", *name)
		os.Exit(2)
	}
	w, err := weights.Load(*wpath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhistory:", err)
		os.Exit(1)
	}
	h, exp := c.Build(*seed, &w)
	if *expect {
		fmt.Fprintf(os.Stderr, "flagged=%v triggered=%v signal=%v edge_tasks=%d\n", exp.Flagged, exp.Triggered, exp.Signal, exp.EdgeTasks)
	}
	os.Stdout.Write(h.Render())
}
