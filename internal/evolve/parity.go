package evolve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/weights"
)

// DefaultParityBudget is the largest too-high cost one run's change may add on the parity prompts,
// measured against the active version the run started from: the levels the prompts move up times
// cost.too_high, divided by the number of prompts. Measured on the 255 prompts from v0001: +1 on any
// signal costs at most 0.004 (greenfield, which the suite rejects anyway, 0.078); +2 costs 0.020
// (layer-crossings), 0.024 (components>=3), 0.051 (ambiguous), 0.055 (cross-layer), 0.067
// (contract-rule-hit). 0.03 lets any +1 and the +2s that move one prompt in fifty through, and stops a
// run that would send one prompt in twenty a level higher (docs/decisions.md#parity-price). tune.toml's
// [evolve] parity_budget overrides it.
const DefaultParityBudget = 0.03

// maxParityLine bounds one line of a parity file (the real lines are under 2 KB).
const maxParityLine = 1 << 20

// Parity is a set of real prompts, each detected once, on which a candidate is priced.
type Parity struct {
	IDs        []string
	Detections []scorer.Detection
}

// Len is the number of prompts.
func (p *Parity) Len() int {
	if p == nil {
		return 0
	}
	return len(p.Detections)
}

// ReadParity reads a parity.jsonl file (one JSON object per line with "id", "prompt" and "history") and
// detects every prompt once. Blank lines are skipped; anything else that is not such an object is an
// error naming the line.
func ReadParity(r io.Reader, name string) (*Parity, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	out := &Parity{}
	for line := 1; ; line++ {
		b, err := readBoundedLine(br)
		if err == errLineTooLong {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes", name, line, maxParityLine)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			var rec struct {
				ID      string   `json:"id"`
				Prompt  *string  `json:"prompt"`
				History []string `json:"history"`
			}
			if jerr := json.Unmarshal(b, &rec); jerr != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, line, jerr)
			}
			if rec.Prompt == nil {
				return nil, fmt.Errorf("%s:%d: no \"prompt\"", name, line)
			}
			out.IDs = append(out.IDs, rec.ID)
			out.Detections = append(out.Detections, scorer.Detect(*rec.Prompt, rec.History))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
}

var errLineTooLong = fmt.Errorf("line too long")

func readBoundedLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxParityLine {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}

// ParityShift is what a candidate does to the parity prompts' final levels, compared with the parent:
// Up[l] and Down[l] count the prompts at level l under the parent that move up or down.
type ParityShift struct {
	Prompts    int                    `json:"prompts"`
	Changed    int                    `json:"changed"`
	Up         [weights.NumLevels]int `json:"up_from"`
	Down       [weights.NumLevels]int `json:"down_from"`
	LevelsUp   int                    `json:"levels_up"`
	LevelsDown int                    `json:"levels_down"`
	// TooHighCost is levels_up × cost.too_high / prompts, before any credit.
	TooHighCost Num `json:"too_high_cost"`
	// Lifted counts the prompts the candidate moves from L0/L1 to L2 or higher; Credit is the regressions
	// that is expected to avoid (Lifted × the change's estimated excess rate) × cost.too_low / prompts.
	// NetPrice is the price of the levels raised on prompts that did not need them (every level up, less
	// the lifted prompts' expected need) × cost.too_high / prompts, minus Credit: the parity price with
	// the regressions avoided credited (docs/decisions.md#parity-price). Budget bounds NetPrice.
	Lifted int `json:"lifted"`
	Credit Num `json:"credit"`
	// HistoryCredit is the regressions the change is expected to avoid on the history's tasks, per task,
	// × cost.too_low (the loss rule's credit, docs/decisions.md#parity-price): the levels a change raises
	// on the prompts are paid for by the regressions it avoids where the evidence came from.
	HistoryCredit Num  `json:"history_credit"`
	NetPrice      Num  `json:"net_price"`
	Budget        Num  `json:"budget"`
	OverBudget    bool `json:"over_budget"`
}

// String is a one-line summary: "3 of 255 prompts change level (up 3: L1→ 3; down 0), too-high cost 0.012 ≤ 0.050".
func (s ParityShift) String() string {
	if s.Prompts == 0 {
		return "no parity prompts"
	}
	cmp := "≤"
	if s.OverBudget {
		cmp = ">"
	}
	return fmt.Sprintf("%d of %d parity prompts change level (up %d, down %d), too-high cost %.3f, credit %.3f for %d lifted out of L0/L1 and %.3f for the history's regressions avoided, net price %.3f %s budget %.3f",
		s.Changed, s.Prompts, sum(s.Up[:]), sum(s.Down[:]), float64(s.TooHighCost), float64(s.Credit), s.Lifted,
		float64(s.HistoryCredit), float64(s.NetPrice), cmp, float64(s.Budget))
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// PriceParity replays the parity prompts under parent and candidate (docs/decisions.md#parity-price);
// excess is the change's estimated excess regression rate, credited on every prompt it lifts out of
// L0/L1, and historyCredit the regressions it is expected to avoid on the history, per task, × too_low.
func PriceParity(p *Parity, parent, cand *weights.Weights, budget, excess, historyCredit float64) ParityShift {
	out := ParityShift{Prompts: p.Len(), Budget: Num(budget)}
	if p.Len() == 0 {
		return out
	}
	var r raise
	for i := range p.Detections {
		d := &p.Detections[i]
		_, _, before, _ := d.Levels(parent)
		_, _, after, _ := d.Levels(cand)
		switch {
		case after > before:
			out.Changed++
			out.Up[before]++
			out.LevelsUp += int(after - before)
			// Every prompt lifted out of L0/L1 is credited (the loss rule's account of a task, eligible).
			r.add(before, after, true, 1)
		case after < before:
			out.Changed++
			out.Down[before]++
			out.LevelsDown += int(before - after)
		}
	}
	out.Lifted = int(r.lifted)
	avoided, extra := r.avoided(excess), r.extra(excess)
	n := float64(out.Prompts)
	out.TooHighCost = Num(float64(out.LevelsUp*cand.Cost.TooHigh) / n)
	out.Credit = Num(avoided * float64(cand.Cost.TooLow) / n)
	out.HistoryCredit = Num(historyCredit)
	out.NetPrice = Num(extra*float64(cand.Cost.TooHigh)/n) - out.Credit - out.HistoryCredit
	out.OverBudget = float64(out.NetPrice) > budget+1e-12
	return out
}
