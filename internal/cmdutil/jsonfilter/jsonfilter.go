// Package jsonfilter is gh's --jq and --template for every command that prints JSON: the flags, their
// checks and the writer that applies them, defined once for the whole command tree. It lives apart
// from cmdutil so that the light `tune score` binary, which links cmdutil, does not link gojq
// (docs/decisions.md#score-start-up); the light binary hands a command line with --jq or --template
// to tune-full.
package jsonfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/template"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// Flag names, as gh spells them.
const (
	JQ       = "jq"
	Template = "template"
)

// Writer is a command's stdout: it passes every byte through until Setup finds --jq or --template,
// then it holds the JSON the command prints and, at Close, writes what the filter makes of it.
type Writer struct {
	out    io.Writer
	held   bytes.Buffer
	filter func(w io.Writer, v any) error
	flag   string // "--jq EXPR" or "--template TEXT", for errors
}

// NewWriter wraps out.
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

func (w *Writer) Write(p []byte) (int, error) {
	if w.filter == nil {
		return w.out.Write(p)
	}
	return w.held.Write(p)
}

// Close applies the filter to each JSON document the command printed (one, or a stream of them) and
// writes the result; without a filter it does nothing. A document that is not JSON, or a filter that
// fails on it, is an error (exit 1).
func (w *Writer) Close() error {
	if w.filter == nil {
		return nil
	}
	filter := w.filter
	w.filter = nil // a second Close writes nothing
	dec := json.NewDecoder(&w.held)
	dec.UseNumber()
	var out bytes.Buffer
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: the output is not JSON: %w", w.flag, err)
		}
		if err := filter(&out, numbers(v)); err != nil {
			return fmt.Errorf("%s: %w", w.flag, err)
		}
	}
	_, err := w.out.Write(out.Bytes())
	return err
}

// AddFlags gives every command of the tree that has --json (its own or inherited from a parent that
// declares it persistent) --jq and --template, declared the same way. Call it once the tree is built.
func AddFlags(cmd *cobra.Command) {
	// Flags() before the command runs holds its own flags only (cobra merges the parents'
	// persistent ones when it parses).
	switch {
	case cmd.PersistentFlags().Lookup("json") != nil:
		addFlags(cmd, true)
	case cmd.Flags().Lookup("json") != nil:
		addFlags(cmd, false)
	}
	for _, c := range cmd.Commands() {
		AddFlags(c)
	}
}

func addFlags(cmd *cobra.Command, persistent bool) {
	flags := cmd.Flags()
	if persistent {
		flags = cmd.PersistentFlags()
	}
	flags.String(JQ, "", "filter the JSON output with a jq `expression` (gojq; implies --json)")
	flags.String(Template, "", "format the JSON output with a Go text/template `string` (implies --json)")
}

// Setup reads --jq and --template of the command that runs: with either, the command prints JSON (its
// --json is set) into w, which filters it at Close. Its refusals are usage errors: both flags at once,
// another --format, an expression or template that does not parse.
func Setup(cmd *cobra.Command, w *Writer) error {
	flags := cmd.Flags()
	if flags.Lookup(JQ) == nil {
		return nil
	}
	expr, _ := flags.GetString(JQ)
	text, _ := flags.GetString(Template)
	given := flags.Changed(JQ) || flags.Changed(Template)
	switch {
	case !given:
		return nil
	case flags.Changed(JQ) && flags.Changed(Template):
		return exitcode.FlagErrorf("--jq and --template: give one of them")
	}
	name := "--" + JQ
	if flags.Changed(Template) {
		name = "--" + Template
	}
	if f := flags.Lookup("format"); f != nil && f.Changed && f.Value.String() != "json" {
		return exitcode.FlagErrorf("%s filters JSON: it does not go with --format %s", name, f.Value.String())
	}
	if err := flags.Set("json", "true"); err != nil {
		return err
	}
	if flags.Changed(JQ) {
		filter, err := compileJQ(expr)
		if err != nil {
			return exitcode.FlagErrorf("--jq %q: %v", expr, err)
		}
		w.filter, w.flag = filter, "--jq"
		return nil
	}
	t, err := template.New("template").Option("missingkey=zero").Parse(text)
	if err != nil {
		return exitcode.FlagErrorf("--template: %v", err)
	}
	w.filter = func(out io.Writer, v any) error { return t.Execute(out, v) }
	w.flag = "--template"
	return nil
}

// compileJQ compiles a jq expression into a filter that writes each result on a line: a string as
// is (jq -r, as gh prints it), anything else as compact JSON.
func compileJQ(expr string) (func(io.Writer, any) error, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	return func(out io.Writer, v any) error {
		iter := code.Run(v)
		for {
			r, ok := iter.Next()
			if !ok {
				return nil
			}
			if err, isErr := r.(error); isErr {
				var halt *gojq.HaltError
				if errors.As(err, &halt) && halt.Value() == nil {
					return nil
				}
				return err
			}
			if s, isString := r.(string); isString {
				if _, err := io.WriteString(out, s+"\n"); err != nil {
					return err
				}
				continue
			}
			enc := json.NewEncoder(out)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	}, nil
}

// numbers turns the json.Number values the decoder kept into what gojq computes with: int when the
// number is an integer that fits, else float64 (gojq does not take json.Number).
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil && n >= math.MinInt && n <= math.MaxInt {
			return int(n)
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}
