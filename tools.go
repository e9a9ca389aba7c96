//go:build tools

// Package tools pins the project dependencies before every package that uses them exists.
package main

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/aclements/go-moremath/stats"
	_ "github.com/gofrs/flock"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/stat"
	_ "gonum.org/v1/plot"
)
