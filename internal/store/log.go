package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// LogFile is the append-only, hash-chained evolution log.
const LogFile = "evolution.jsonl"

// Log actions. init is written once, by the first write to a store that has no log yet; it records the
// version files that existed then.
const (
	ActionInit           = "init"
	ActionProposeAttempt = "propose-attempt"
	ActionAccept         = string(weights.DecisionAccept) // an attempt is logged under its decision
	ActionHalve          = string(weights.DecisionHalve)
	ActionRevert         = string(weights.DecisionRevert)
	ActionApply          = "apply"
	ActionRollback       = "rollback"
	ActionRepair         = "repair"
)

// ValidAction reports whether a is a log action this build knows.
func ValidAction(a string) bool {
	switch a {
	case ActionInit, ActionProposeAttempt, ActionAccept, ActionHalve, ActionRevert, ActionApply, ActionRollback, ActionRepair:
		return true
	}
	return false
}

// LogEntry is one line of weights/evolution.jsonl (compact JSON, fields in this order).
//
// The store fills Serial, Lineage, Time and PrevHash; callers of Store.Log fill the rest. Serial goes up by
// one per line; Lineage is fixed by the init entry (Terraform state serial/lineage); PrevHash is the
// sha256 (hex) of the previous line's bytes ("" on the first line), which makes the log a hash chain.
type LogEntry struct {
	Serial  int       `json:"serial"`
	Lineage string    `json:"lineage"`
	Action  string    `json:"action"`
	Time    time.Time `json:"time"`
	// Parent is the active version when the action started; Result the version it wrote or made active
	// (0 when none, e.g. a reverted attempt).
	Parent int `json:"parent"`
	Result int `json:"result,omitempty"`
	// ResultSHA256 is the sha256 (hex) of the result version file, checked by Verify.
	ResultSHA256 string `json:"result_sha256,omitempty"`
	// Restores is, for a rollback, the version whose content the result repeats.
	Restores int    `json:"restores,omitempty"`
	Proposal string `json:"proposal,omitempty"` // proposal id
	// ProposalSHA256 is the proposal's ContentSHA256, on every attempt entry of it: apply writes only a
	// proposal whose content still hashes to it.
	ProposalSHA256 string `json:"proposal_sha256,omitempty"`
	// InputSHA256 is the sha256 of the proposal's saved report input (proposals/inputs/<id>.toml), on
	// every attempt entry of it: tune report proposal renders only an input that still hashes to it.
	InputSHA256 string `json:"input_sha256,omitempty"`
	// Change names the change: an attempt's as weights.ChangeLabel spells it ("bucket L1 edge -1"), an
	// apply's or rollback's differences as weights.DiffLabel does ("ambiguous +1, bucket L1 +0.5").
	Change   string           `json:"change,omitempty"`
	Decision weights.Decision `json:"decision,omitempty"` // for a repair entry: what the repair did
	Evidence []string         `json:"evidence,omitempty"`
	// Ledger (apply only) lists the keys of the tasks that supported the applied change: the evidence
	// ledger. A task supports at most one applied change (see Store.Ledger).
	Ledger []string `json:"ledger,omitempty"`
	// EvidenceThrough (apply only) is the applied proposal's evidence_through: the evidence watermark
	// (see Store.EvidenceWatermark).
	EvidenceThrough string   `json:"evidence_through,omitempty"`
	SuiteLossBefore *float64 `json:"suite_loss_before,omitempty"`
	SuiteLossAfter  *float64 `json:"suite_loss_after,omitempty"`
	// Harvested lists the fixture files an apply added.
	Harvested []string `json:"harvested,omitempty"`
	// HarvestedSHA256 is the sha256 of each harvested fixture file, in the order of Harvested: repair
	// writes only content that hashes to it.
	HarvestedSHA256 []string `json:"harvested_sha256,omitempty"`
	// Files records the sha256 of version files: every file for init, the re-signed files for a resign.
	Files    []FileHash `json:"files,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	PrevHash string     `json:"prev_hash"`
}

// FileHash is a version file and the sha256 (hex) of its bytes.
type FileHash struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// Loss returns a pointer to v, for the optional loss fields.
func Loss(v float64) *float64 { return &v }

func (e *LogEntry) marshalLine() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		panic(err) // strings, numbers and times always encode
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func lineHash(line []byte) string {
	h := sha256.Sum256(line)
	return hex.EncodeToString(h[:])
}

func fileSHA(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// logLine is one line of the log with its raw bytes and line number; OK is false when it did not parse.
type logLine struct {
	No    int
	Raw   []byte
	Entry LogEntry
	OK    bool
}

// parseLog splits the log into lines. A line that is not a valid entry is kept (OK false, for the hash
// chain) and reported as a problem; chain checks happen in Verify. complete is false when the file does not end in a newline
// (an append that was cut short).
func parseLog(data []byte) (lines []logLine, bad []Problem, complete bool) {
	p := logMemo.get(data, func() parsedLog {
		var p parsedLog
		p.lines, p.bad, p.complete = decodeLog(data)
		// the memo keeps no bytes of its first caller's: every caller's lines are cut from its own data
		p.rawLen = make([]int, len(p.lines))
		for i := range p.lines {
			p.rawLen[i], p.lines[i].Raw = len(p.lines[i].Raw), nil
		}
		return p
	})
	// The caller's own copies, deep: a writer appends its new lines to its own state's, and Store.Entries
	// hands the entries out, whose callers owned them when every read parsed anew; a slice shared with the
	// memo would let one caller's edit change what every later read of the same bytes says. Eighth review
	// (docs/decisions.md#eighth-review-store-reads-by-content).
	lines = make([]logLine, len(p.lines))
	off := 0
	for i, l := range p.lines {
		n := p.rawLen[i]
		lines[i] = logLine{No: l.No, Raw: data[off : off+n : off+n], Entry: l.Entry.clone(), OK: l.OK}
		off += n + 1
	}
	return lines, slices.Clone(p.bad), p.complete
}

type parsedLog struct {
	lines    []logLine
	rawLen   []int // the length of each line's Raw, which the memo does not keep
	bad      []Problem
	complete bool
}

var logMemo contentMemo[parsedLog]

// decodeLog is parseLog without the memo.
func decodeLog(data []byte) (lines []logLine, bad []Problem, complete bool) {
	complete = len(data) == 0 || data[len(data)-1] == '\n'
	no := 0
	for len(data) > 0 {
		no++
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		var e LogEntry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			bad = append(bad, Problem{Kind: ProblemLog, File: LogFile, Line: no, Message: fmt.Sprintf("not a log entry: %v", err)})
			lines = append(lines, logLine{No: no, Raw: raw})
			continue
		}
		if !ValidAction(e.Action) {
			bad = append(bad, Problem{Kind: ProblemLog, File: LogFile, Line: no, Message: fmt.Sprintf("unknown action %q", e.Action)})
		}
		lines = append(lines, logLine{No: no, Raw: raw, Entry: e, OK: true})
	}
	return lines, bad, complete
}

// clone is e with its own copies of the slices and pointers it holds.
func (e LogEntry) clone() LogEntry {
	e.Evidence = slices.Clone(e.Evidence)
	e.Ledger = slices.Clone(e.Ledger)
	e.Harvested = slices.Clone(e.Harvested)
	e.HarvestedSHA256 = slices.Clone(e.HarvestedSHA256)
	e.Files = slices.Clone(e.Files)
	if e.SuiteLossBefore != nil {
		e.SuiteLossBefore = Loss(*e.SuiteLossBefore)
	}
	if e.SuiteLossAfter != nil {
		e.SuiteLossAfter = Loss(*e.SuiteLossAfter)
	}
	return e
}

func unmarshalEntry(line []byte, e *LogEntry) error { return json.Unmarshal(line, e) }
