package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/redact"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProposalsDir is the sub-directory of the weights store that holds pending proposals.
const ProposalsDir = "proposals"

// InputsDir is where, under ProposalsDir, each proposal's EVAL report input is saved (<id>.toml).
const InputsDir = "inputs"

// Proposal is one evolution result waiting to be applied: the candidate weights, the steps that led to
// them, the flagged tasks behind them and the suite losses measured by replay. It is stored as JSON in
// weights/proposals/<ID>.json; the same proposal always serialises to the same bytes.
//
// JSON shape (field order fixed, 2-space indent):
//
//	{"id", "created", "parent", "decision", "reason", "suite_loss_before", "suite_loss_after",
//	 "confidence"?, "evidence_through"?, "candidate": {"signals": {name: number}, "buckets": {"L0".."L3": number},
//	 "cost": {"too_low", "too_high", "other_item"}}, "steps": [...], "evidence": [...]}
//
// Only the signals, buckets and cost of Candidate are stored; its other fields are filled when the
// proposal is read (Schema, Parent, Reason) or applied (Version, Created, Evidence).
type Proposal struct {
	ID              string
	Created         time.Time
	Parent          int // weights version it was measured against
	Decision        weights.Decision
	Candidate       weights.Weights
	Steps           []ProposalStep
	Evidence        []FlaggedTask
	SuiteLossBefore float64
	SuiteLossAfter  float64
	Reason          string
	// Confidence summarises the evidence for a PR reader: strong | provisional | underpowered ("" unknown).
	Confidence string
	// EvidenceThrough is the meta time of the last settled task the proposal's evidence counted (empty
	// when unknown): after an apply, evidence up to it is spent (docs/decisions.md#spent-evidence).
	EvidenceThrough string
}

// ProposalStep is one attempted change (+Delta on a signal weight or on a bucket edge) as a proposal
// stores it: the one persisted form of an evolution attempt (app maps evolve.Attempt to it, and the
// proposal report's attempts from it). Its JSON is the proposal file's, hashed into the proposal id:
// field order and tags are the lock. Delta is written in points (weights.Half: 1, -0.5).
type ProposalStep struct {
	Kind            weights.ChangeKind `json:"kind"`
	Signal          string             `json:"signal,omitempty"` // reference signal name when Kind is signal
	Edge            string             `json:"edge,omitempty"`   // "L0".."L3" when Kind is bucket
	Delta           weights.Half       `json:"delta"`
	Decision        weights.Decision   `json:"decision"`
	SuiteLossBefore float64            `json:"suite_loss_before"`
	SuiteLossAfter  float64            `json:"suite_loss_after"`
	// Optional screen statistics for the PR table; nil or "" when the evolution step did not report them.
	Counts     *TwoByTwo `json:"counts,omitempty"`     // signal present/absent × task flagged/not
	FisherP    *float64  `json:"fisher_p,omitempty"`   // one-sided Fisher p, raw
	HolmP      *float64  `json:"holm_p,omitempty"`     // Holm-adjusted across signals
	Confidence string    `json:"confidence,omitempty"` // strong | provisional | underpowered
	// EValue is the accumulated test's e-value that let the signal through (the screen's, per log and
	// block and mixed over onsets: not a function of Counts); nil in proposals written before it was kept.
	EValue *float64 `json:"e_value,omitempty"`
}

// Label names the change as evolve.Change.String does (weights.ChangeLabel): "ambiguous +1",
// "bucket L1 edge -1".
func (st *ProposalStep) Label() string {
	knob := st.Signal
	if st.Kind == weights.ChangeBucket {
		knob = st.Edge
	}
	return weights.ChangeLabel(st.Kind, knob, st.Delta)
}

// TwoByTwo is the screen table of one signal: A present & flagged, B present & not flagged, C absent &
// flagged, D absent & not flagged.
type TwoByTwo struct {
	A int `json:"a"`
	B int `json:"b"`
	C int `json:"c"`
	D int `json:"d"`
}

// FlaggedTask is one low-side regression that motivated a proposal. Prompt (the task text) is what
// harvesting turns into a fixture; it is empty when the trace did not keep it.
type FlaggedTask struct {
	MetaTimestamp string
	Title         string
	Level         string // level it was dispatched at, "L0".."L4"
	Source        string // trace log path
	Evidence      []string
	Prompt        string
	// Key identifies the task across runs for the evidence ledger (evolve.TaskKey); "" in proposals
	// written before the ledger existed.
	Key string
}

// --- JSON shapes. Hand-written shadow structs keep the field order fixed and print weights as numbers
// (2, -5, 2.5) rather than as internal half-points.

type proposalJSON struct {
	ID              string            `json:"id,omitempty"`
	Created         *time.Time        `json:"created,omitempty"`
	Parent          int               `json:"parent"`
	Decision        weights.Decision  `json:"decision"`
	Reason          string            `json:"reason"`
	SuiteLossBefore float64           `json:"suite_loss_before"`
	SuiteLossAfter  float64           `json:"suite_loss_after"`
	Confidence      string            `json:"confidence,omitempty"`
	EvidenceThrough string            `json:"evidence_through,omitempty"`
	Candidate       candidateJSON     `json:"candidate"`
	Steps           []ProposalStep    `json:"steps"`
	Evidence        []flaggedTaskJSON `json:"evidence"`
}

type candidateJSON struct {
	Signals NumberMap `json:"signals"`
	Buckets NumberMap `json:"buckets"`
	Cost    NumberMap `json:"cost"`
}

type flaggedTaskJSON struct {
	MetaTimestamp string   `json:"meta_timestamp"`
	Title         string   `json:"title"`
	Level         string   `json:"level"`
	Source        string   `json:"source"`
	Evidence      []string `json:"evidence"`
	Prompt        string   `json:"prompt,omitempty"`
	Key           string   `json:"key,omitempty"`
}

// NamedNumber is one key of a NumberMap.
type NamedNumber struct {
	Name  string
	Value float64
}

// NumberMap is a JSON object of numbers printed in a fixed key order (table order), which a Go map cannot
// do. It reads any key order.
type NumberMap []NamedNumber

func (o NumberMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(n.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(n.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o *NumberMap) UnmarshalJSON(data []byte) error {
	// Decode into a map, but keep the keys in file order so that errors and re-marshals are stable.
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want an object of numbers")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		var v float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		if seen[key] {
			return fmt.Errorf("%q: duplicate key", key)
		}
		seen[key] = true
		*o = append(*o, NamedNumber{key, v})
	}
	_, err = dec.Token()
	return err
}

func (o NumberMap) lookup(name string) (float64, bool) {
	for _, n := range o {
		if n.Name == name {
			return n.Value, true
		}
	}
	return 0, false
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "components>=3" readable instead of "components\u003e=3"
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

var bucketNames = [weights.NumLevels - 1]string{"L0", "L1", "L2", "L3"}

// WeightsJSON returns the signal weights, bucket edges and costs of w as JSON objects in table order:
// {"greenfield": 3, …}, {"L0": -7, …}, {"too_low": 2, "too_high": 1, "other_item": 1}. Proposals and
// `tune weights show --json` use the same shape.
func WeightsJSON(w *weights.Weights) (signals, buckets, cost NumberMap) {
	c := weightsToCandidate(w)
	return c.Signals, c.Buckets, c.Cost
}

func weightsToCandidate(w *weights.Weights) candidateJSON {
	var c candidateJSON
	for _, s := range weights.Signals() {
		c.Signals = append(c.Signals, NamedNumber{s.String(), w.Signals[s].Float()})
	}
	for i, e := range w.Buckets.Edges {
		c.Buckets = append(c.Buckets, NamedNumber{bucketNames[i], e.Float()})
	}
	c.Cost = NumberMap{
		{"too_low", float64(w.Cost.TooLow)},
		{"too_high", float64(w.Cost.TooHigh)},
		{"other_item", float64(w.Cost.OtherItem)},
	}
	return c
}

// candidateToWeights checks a candidate the way weights.Parse checks a version file: all nine signals, four
// increasing bucket edges, three non-negative integer costs, every weight a multiple of 0.5.
func candidateToWeights(c candidateJSON) (weights.Weights, error) {
	w := weights.Weights{Schema: weights.Schema}
	seen := [weights.NumSignals]bool{}
	for _, n := range c.Signals {
		s, ok := weights.SignalByName(n.Name)
		if !ok {
			return w, fmt.Errorf("candidate.signals.%q: unknown signal", n.Name)
		}
		h, err := weights.HalfFromFloat(n.Value)
		if err != nil {
			return w, fmt.Errorf("candidate.signals.%q: %v", n.Name, err)
		}
		w.Signals[s], seen[s] = h, true
	}
	for _, s := range weights.Signals() {
		if !seen[s] {
			return w, fmt.Errorf("candidate.signals.%q: missing", s.String())
		}
	}
	for _, n := range c.Buckets {
		if !slices.Contains(bucketNames[:], n.Name) {
			return w, fmt.Errorf("candidate.buckets.%s: unknown bucket edge (known: L0, L1, L2, L3)", n.Name)
		}
	}
	for i, name := range bucketNames {
		v, ok := c.Buckets.lookup(name)
		if !ok {
			return w, fmt.Errorf("candidate.buckets.%s: missing", name)
		}
		h, err := weights.HalfFromFloat(v)
		if err != nil {
			return w, fmt.Errorf("candidate.buckets.%s: %v", name, err)
		}
		if i > 0 && h <= w.Buckets.Edges[i-1] {
			return w, fmt.Errorf("candidate.buckets.%s: edge %s must be above %s (edges must increase)", name, h.Plain(), w.Buckets.Edges[i-1].Plain())
		}
		w.Buckets.Edges[i] = h
	}
	costs := []*int{&w.Cost.TooLow, &w.Cost.TooHigh, &w.Cost.OtherItem}
	for _, n := range c.Cost {
		if !slices.Contains([]string{"too_low", "too_high", "other_item"}, n.Name) {
			return w, fmt.Errorf("candidate.cost.%s: unknown cost (known: too_low, too_high, other_item)", n.Name)
		}
	}
	for i, name := range []string{"too_low", "too_high", "other_item"} {
		v, ok := c.Cost.lookup(name)
		if !ok {
			return w, fmt.Errorf("candidate.cost.%s: missing", name)
		}
		if v < 0 || v != float64(int(v)) {
			return w, fmt.Errorf("candidate.cost.%s: must be a non-negative integer", name)
		}
		*costs[i] = int(v)
	}
	return w, nil
}

func (p *Proposal) toJSON(withIdentity bool) proposalJSON {
	j := proposalJSON{
		Parent:          p.Parent,
		Decision:        p.Decision,
		Reason:          p.Reason,
		SuiteLossBefore: p.SuiteLossBefore,
		SuiteLossAfter:  p.SuiteLossAfter,
		Confidence:      p.Confidence,
		EvidenceThrough: p.EvidenceThrough,
		Candidate:       weightsToCandidate(&p.Candidate),
		Steps:           append([]ProposalStep{}, p.Steps...),
		Evidence:        []flaggedTaskJSON{},
	}
	if withIdentity {
		j.ID = p.ID
		if !p.Created.IsZero() {
			t := p.Created.UTC()
			j.Created = &t
		}
	}
	for _, t := range p.Evidence {
		ev := t.Evidence
		if ev == nil {
			ev = []string{}
		}
		j.Evidence = append(j.Evidence, flaggedTaskJSON{
			MetaTimestamp: t.MetaTimestamp, Title: t.Title, Level: t.Level, Source: t.Source, Evidence: ev, Prompt: t.Prompt, Key: t.Key,
		})
	}
	return j
}

func encodeIndented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ComputeID returns the proposal's content ID: "p-" + the first 12 hex digits of ContentSHA256, so
// re-running the same evolution gives the same ID.
func (p *Proposal) ComputeID() string {
	return idOf(p.ContentSHA256())
}

// idOf is the proposal id of a content hash.
func idOf(contentSHA string) string { return "p-" + contentSHA[:12] }

// ValidProposalID reports whether id has the form idOf gives: "p-" and 12 lower-case hex digits.
func ValidProposalID(id string) bool {
	hexDigits, ok := strings.CutPrefix(id, "p-")
	if !ok || len(hexDigits) != 12 {
		return false
	}
	for _, c := range hexDigits {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ContentSHA256 is the sha256 (hex) of the proposal's canonical JSON without the id and created fields.
// The evolution log records it with every attempt of the proposal, and apply writes only a proposal whose
// content still has this hash (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
func (p *Proposal) ContentSHA256() string {
	data, err := encodeIndented(p.toJSON(false))
	if err != nil {
		panic(err) // plain structs of strings and numbers always encode
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// MarshalJSON writes the canonical form (ID recomputed from the content).
func (p *Proposal) MarshalJSON() ([]byte, error) {
	q := *p
	q.ID = p.ComputeID()
	return encodeIndented(q.toJSON(true))
}

func validDecision(d weights.Decision) bool {
	switch d {
	case weights.DecisionAccept, weights.DecisionHalve, weights.DecisionRevert, weights.DecisionNone:
		return true
	}
	return false
}

// redactText redacts every free-text field of p (its reason, and each flagged task's title, prompt,
// source and evidence lines): a proposal is committed and rendered into the PR body. Redaction is
// idempotent, so a proposal read back keeps its id.
func (p *Proposal) redactText() {
	p.Reason = redact.String(p.Reason)
	for i := range p.Evidence {
		t := &p.Evidence[i]
		t.Title, t.Prompt, t.Source = redact.String(t.Title), redact.String(t.Prompt), redact.String(t.Source)
		for j := range t.Evidence {
			t.Evidence[j] = redact.String(t.Evidence[j])
		}
	}
}

// Applicable reports whether the proposal carries a change that `tune apply` may write.
func (p *Proposal) Applicable() bool {
	return p.Decision.Applicable()
}

// WriteProposal stores p in dir as <ID>.json (atomically) and sets p.ID. It is idempotent: when a file with
// the same ID exists, nothing is rewritten and created is false.
func WriteProposal(dir string, p *Proposal) (path string, created bool, err error) {
	return writeProposal(dir, p, "")
}

// writeProposal is WriteProposal with the content hash its caller computed after the redaction ("": to
// compute).
func writeProposal(dir string, p *Proposal, sha string) (path string, created bool, err error) {
	if !validDecision(p.Decision) {
		return "", false, fmt.Errorf("proposal decision %q: want accept, halve, revert or none", p.Decision)
	}
	if sha == "" {
		p.redactText()
		sha = p.ContentSHA256()
	}
	if _, err := candidateToWeights(weightsToCandidate(&p.Candidate)); err != nil {
		return "", false, fmt.Errorf("proposal: %w", err)
	}
	p.ID = idOf(sha)
	if p.Created.IsZero() {
		return "", false, fmt.Errorf("proposal %s: created time is not set", p.ID)
	}
	data, err := encodeIndented(p.toJSON(true))
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	path = filepath.Join(dir, p.ID+".json")
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := writeFileAtomic(path, data); err != nil {
		return "", false, err
	}
	return path, true, nil
}

// ReadProposal reads and checks a proposal file. Errors name the file and, for syntax errors, the line.
// A missing id is computed; an id that does not match the content is refused (the file was edited).
func ReadProposal(path string) (*Proposal, error) {
	data, err := regular.ReadLimitedNoFollow(path, regular.ProposalFile)
	if err != nil {
		return nil, err
	}
	return ParseProposal(path, data)
}

// ParseProposal is ReadProposal on bytes already read; name prefixes every error.
func ParseProposal(name string, data []byte) (*Proposal, error) {
	p, _, err := parseProposal(name, data)
	return p, err
}

// parseProposal is ParseProposal that also returns the content hash (ContentSHA256) it computed to check
// the id: one canonical encoding per read, not one for the id and one more for its caller's hash (each
// costs as much as the decode on a proposal of a year's evidence).
func parseProposal(name string, data []byte) (*Proposal, string, error) {
	p, err := decodeProposal(name, data)
	if err != nil {
		return nil, "", err
	}
	sha := p.ContentSHA256()
	id := idOf(sha)
	if p.ID != "" && p.ID != id {
		return nil, "", fmt.Errorf("%s: id %s does not match the content (hash gives %s): the proposal was edited after it was written; %s", name, p.ID, id, restoreProposal)
	}
	p.ID = id
	return p, sha, nil
}

// restoreProposal is what to do with a proposal file that is no longer the one tune wrote.
const restoreProposal = "restore it from version control, or remove it (the next tune nightly proposes again from the evidence)"

// decodeProposal decodes and checks a proposal file's fields; its ID is the file's own (maybe empty),
// not yet checked against the content.
func decodeProposal(name string, data []byte) (*Proposal, error) {
	var j proposalJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%s: %s", name, describeJSONError(data, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%s:%d: unexpected data after the proposal object", name, lineAt(data, dec.InputOffset()))
	}
	if err := checkFields(data); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if !validDecision(j.Decision) {
		return nil, fmt.Errorf("%s: decision %q: want accept, halve, revert or none", name, j.Decision)
	}
	if j.Parent < 0 {
		return nil, fmt.Errorf("%s: parent %d: must be a weights version (1, 2, …)", name, j.Parent)
	}
	cand, err := candidateToWeights(j.Candidate)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	p := &Proposal{
		Parent: j.Parent, Decision: j.Decision, Reason: j.Reason,
		SuiteLossBefore: j.SuiteLossBefore, SuiteLossAfter: j.SuiteLossAfter, Confidence: j.Confidence,
		EvidenceThrough: j.EvidenceThrough, Candidate: cand,
	}
	if j.Created != nil {
		p.Created = j.Created.UTC()
	}
	p.Candidate.Parent = j.Parent
	p.Candidate.Reason = j.Reason
	for i, s := range j.Steps {
		switch s.Kind {
		case weights.ChangeSignal:
			if _, ok := weights.SignalByName(s.Signal); !ok {
				return nil, fmt.Errorf("%s: steps[%d].signal %q: unknown signal", name, i, s.Signal)
			}
		case weights.ChangeBucket:
			if !slices.Contains(bucketNames[:], s.Edge) {
				return nil, fmt.Errorf("%s: steps[%d].edge %q: want L0, L1, L2 or L3", name, i, s.Edge)
			}
		default:
			return nil, fmt.Errorf("%s: steps[%d].kind %q: want signal or bucket", name, i, s.Kind)
		}
		if s.EValue != nil && !(*s.EValue >= 0) {
			// What a report shows as the test's evidence: an e-value is never negative (JSON has no NaN).
			return nil, fmt.Errorf("%s: steps[%d].e_value %v: want a number ≥ 0", name, i, *s.EValue)
		}
		p.Steps = append(p.Steps, s)
	}
	for _, t := range j.Evidence {
		p.Evidence = append(p.Evidence, FlaggedTask(t))
	}
	p.ID = j.ID
	return p, nil
}

// Fields of the proposal JSON that must be present (never defaulted: a missing "parent" is not version
// 0, a null loss is not 0). The others may be left out but not be null.
var (
	proposalRequired = []string{"parent", "decision", "reason", "suite_loss_before", "suite_loss_after", "candidate", "steps", "evidence"}
	candidateFields  = []string{"signals", "buckets", "cost"}
	stepRequired     = []string{"kind", "delta", "decision", "suite_loss_before", "suite_loss_after"}
	evidenceRequired = []string{"meta_timestamp", "title", "level", "source", "evidence"}
)

// checkFields refuses a proposal with a required field missing or any field null, at every level
// encoding/json would silently default (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
// Unknown fields are refused by the decoder itself.
func checkFields(data []byte) error {
	top, err := objectFields(data, "proposal")
	if err != nil || top == nil {
		return err // a syntax error is described by the decoder, with its line
	}
	if err := requireFields(top, "", proposalRequired); err != nil {
		return err
	}
	cand, err := nestedFields(top["candidate"], "candidate")
	if err != nil {
		return err
	}
	if err := requireFields(cand, "candidate.", candidateFields); err != nil {
		return err
	}
	for _, k := range candidateFields {
		m, err := nestedFields(cand[k], "candidate."+k)
		if err != nil {
			return err
		}
		if err := requireFields(m, "candidate."+k+".", nil); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		key      string
		required []string
	}{{"steps", stepRequired}, {"evidence", evidenceRequired}} {
		var items []json.RawMessage
		if err := json.Unmarshal(top[list.key], &items); err != nil {
			return nil // the decoder names the type error
		}
		for i, raw := range items {
			path := fmt.Sprintf("%s[%d]", list.key, i)
			m, err := nestedFields(raw, path)
			if err != nil {
				return err
			}
			if err := requireFields(m, path+".", list.required); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectFields decodes a JSON object into its raw fields; nil (no error) when data is not valid JSON,
// which the typed decode then reports with a line number.
func objectFields(data json.RawMessage, what string) (map[string]json.RawMessage, error) {
	if !json.Valid(data) {
		return nil, nil
	}
	return nestedFields(data, what)
}

// nestedFields is objectFields on a value taken from an object objectFields decoded, which is valid JSON
// already: validating every evidence item again was a third pass over each of them.
func nestedFields(data json.RawMessage, what string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: want a JSON object", what)
	}
	return m, nil
}

func requireFields(m map[string]json.RawMessage, prefix string, required []string) error {
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("%s%s: missing (a proposal is written whole by tune propose; a missing field is never defaulted)", prefix, k)
		}
	}
	for _, k := range sortedKeys(m) {
		if string(bytes.TrimSpace(m[k])) == "null" {
			return fmt.Errorf("%s%s: null (a value is required; null is not 0)", prefix, k)
		}
	}
	return nil
}

func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("line %d: %v", lineAt(data, syn.Offset), err)
	case errors.As(err, &typ):
		want := typ.Type.String()
		if typ.Type == reflect.TypeFor[weights.Half]() {
			want = "a number of points (a multiple of 0.5)"
		}
		return fmt.Sprintf("line %d: %s: want %s, got %s", lineAt(data, typ.Offset), typ.Field, want, typ.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}
