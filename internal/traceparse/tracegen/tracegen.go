// Package tracegen writes synthetic `.ldd/trace.log` files for benchmarks and tests. The output is a
// pure function of its arguments: task i is rendered from a generator seeded with i, so runs are
// reproducible, and the last tasks of a log (its tail) do not depend on the log's size — a 1 MB and a
// 300 MB log end with byte-identical tasks, which is what the tail-read benchmark compares.
//
// Tasks use the v0.13 writer format (µs timestamps, L<n>/<name> labels, signals=, shell quoting)
// with some variety: several loops, baselines, epochs, single-quoted values with inner quotes,
// files=, regression_followed= and regression_of=.
package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Default number of tail tasks: the `tune trace` default window.
const DefaultTail = 20

var (
	fillerBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tailBase   = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	levels     = []string{"L0/reflex", "L1/diagnostic", "L2/deliberate", "L3/structural", "L4/method"}
	dispatches = []string{"auto", "auto", "auto", "bump", "explicit", "override-down"}
	signals    = []string{"greenfield:+3", "components>=3:+2", "cross-layer:+2", "ambiguous:+2", "explicit-bugfix:-5", "single-file:-3", "layer-crossings:+2", "contract-rule-hit:+2"}
	loops      = []string{"inner", "inner", "refine", "design", "cot", "outer"}
	skills     = []string{"reproducibility-first", "root-cause-by-layer", "e2e-driven-iteration", "loss-backprop-lens", "iterative-refinement", "dialectical-cot"}
	words      = []string{"checkout", "auth", "middleware", "refund", "webhook", "parser", "cache", "flaky", "test", "migrate", "schema", "retry", "timeout", "allocator", "consensus", "docs"}
	terminals  = []string{"complete", "complete", "complete", "partial", "handoff", "failed"}
	files      = []string{"api/handler.go", "cart/cart.go", "auth/jwt.go", "billing/refund.go", "docs/arch.md"}
)

// Write writes about size bytes to w: filler tasks, then tailTasks tasks that are the same for every
// size (the filler is dropped when size is smaller than the tail). It returns the bytes written.
func Write(w io.Writer, size int64, tailTasks int) (int64, error) {
	var tail []byte
	for j := range tailTasks {
		tail = AppendTask(tail, uint64(1<<40+j), tailBase.Add(time.Duration(j)*time.Minute))
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	var buf []byte
	for i := 0; written+int64(len(tail)) < size; i++ {
		buf = AppendTask(buf[:0], uint64(i), fillerBase.Add(time.Duration(i)*time.Second))
		n, err := bw.Write(buf)
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	n, err := bw.Write(tail)
	written += int64(n)
	if err != nil {
		return written, err
	}
	return written, bw.Flush()
}

// AppendTask appends one task (meta line, iterations, close) seeded by seed, starting at ts.
func AppendTask(b []byte, seed uint64, ts time.Time) []byte {
	r := rand.New(rand.NewPCG(seed, 0x7472616365))
	tick := func() time.Time { ts = ts.Add(time.Duration(1+r.IntN(900)) * time.Microsecond); return ts }
	lvl := r.IntN(len(levels))
	b = line(b, ts, "meta")
	b = append(b, "  "...)
	b = append(b, levels[lvl]...)
	if lvl >= 3 {
		b = append(b, "  creativity="...)
		b = append(b, []string{"conservative", "standard", "inventive"}[r.IntN(3)]...)
	}
	b = kv(b, "dispatch", dispatches[r.IntN(len(dispatches))])
	if r.IntN(4) > 0 {
		b = append(b, "  signals="...)
		for k, n := 0, 1+r.IntN(3); k < n; k++ {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, signals[r.IntN(len(signals))]...)
		}
	}
	title := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + " #" + strconv.FormatUint(seed, 10)
	if r.IntN(8) == 0 {
		b = append(b, "  task='fix the \"quoted\" case of "...) // the v0.11+ writer's single quotes
		b = append(b, title...)
		b = append(b, "'"...)
	} else {
		b = kv(b, "task", title)
	}
	if r.IntN(10) == 0 {
		b = kv(b, "regression_of", fillerBase.Add(time.Duration(r.IntN(1000))*time.Second).Format(stamp))
	}
	loop := loops[r.IntN(len(loops))]
	b = kv(b, "loops", loop)
	b = append(b, '\n')

	loss := 0.3 + float64(r.IntN(7))/10
	b = line(b, tick(), loop)
	b = append(b, "  baseline  k=0  skill=baseline"...)
	b = kv(b, "action", "baseline for "+title)
	b = lossKV(b, loss)
	b = append(b, '\n')
	epoch := 0
	for k, n := 1, 1+r.IntN(5); k <= n; k++ {
		if r.IntN(12) == 0 {
			epoch++
			b = line(b, tick(), "epoch")
			b = kv(b, "epoch", strconv.Itoa(epoch))
			b = kv(b, "reason", "rubric changed mid-task")
			b = append(b, '\n')
		}
		prev := loss
		loss = max(0, loss-float64(r.IntN(4))/10)
		b = line(b, tick(), loop)
		b = kv(b, "k", strconv.Itoa(k))
		b = kv(b, "skill", skills[r.IntN(len(skills))])
		b = kv(b, "action", words[r.IntN(len(words))]+" → "+words[r.IntN(len(words))]+" guarded")
		b = lossKV(b, loss)
		b = append(b, "  Δloss="...)
		b = signed(b, loss-prev)
		if epoch > 0 {
			b = kv(b, "epoch", strconv.Itoa(epoch))
		}
		if r.IntN(6) == 0 {
			b = kv(b, "files", files[r.IntN(len(files))]+","+files[r.IntN(len(files))])
		}
		b = append(b, '\n')
	}
	b = line(b, tick(), loop)
	b = append(b, "  close"...)
	b = kv(b, "terminal", terminals[r.IntN(len(terminals))])
	b = kv(b, "layer", "3: contract · 5: guard")
	b = append(b, "  docs=synced  loss_final="...)
	b = strconv.AppendFloat(b, loss, 'f', 3, 64)
	if r.IntN(10) == 0 {
		b = append(b, "  regression_followed=true"...)
	}
	return append(b, '\n')
}

const stamp = "2006-01-02T15:04:05.000000Z07:00"

func line(b []byte, ts time.Time, loop string) []byte {
	b = ts.AppendFormat(b, stamp)
	b = append(b, "  "...)
	return append(b, loop...)
}

// kv appends key=value, double-quoted when the value has a space (the writer's rule for values
// without double quotes).
func kv(b []byte, key, value string) []byte {
	b = append(b, "  "...)
	b = append(b, key...)
	b = append(b, '=')
	for i := 0; i < len(value); i++ {
		if value[i] == ' ' || value[i] == '\t' {
			b = append(b, '"')
			b = append(b, value...)
			return append(b, '"')
		}
	}
	return append(b, value...)
}

func lossKV(b []byte, loss float64) []byte {
	b = append(b, "  loss="...)
	b = strconv.AppendFloat(b, loss, 'f', 3, 64)
	b = append(b, "  raw="...)
	b = strconv.AppendInt(b, int64(loss*10+0.5), 10)
	return append(b, "/10"...)
}

// signed formats a Δ as the writer does: "-0.100", "+0.200", "±0.000".
func signed(b []byte, d float64) []byte {
	switch {
	case d < 0:
		b = append(b, '-')
	case d > 0:
		b = append(b, '+')
	default:
		return append(b, "±0.000"...)
	}
	return strconv.AppendFloat(b, math.Abs(d), 'f', 3, 64)
}

// ParseSize reads a log size as gentrace's -size and the process benchmark's -trace-sizes take it:
// bytes, or a number with KB, MB or GB (powers of 1024).
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	upper := strings.ToUpper(strings.TrimSpace(s))
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(upper, u.suffix) {
			upper, mult = strings.TrimSuffix(upper, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(upper), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want bytes or a number with KB, MB or GB", s)
	}
	return n * mult, nil
}
