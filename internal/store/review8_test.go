package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// Eighth review (docs/decisions.md#eighth-review-store-reads-by-content): the memo and the fast path of
// the proposal facts must judge every file as the full parse does.

// canonicalProposal is p as the store writes it, and its content hash.
func canonicalProposal(t *testing.T, p *Proposal) ([]byte, string) {
	t.Helper()
	p.ID = p.ComputeID()
	data, err := encodeIndented(p.toJSON(true))
	if err != nil {
		t.Fatal(err)
	}
	_, sha, err := parseProposal("p.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return data, sha
}

// withCreatedLine replaces the created line of a canonical proposal by line (and drops the id line when
// dropID): the two lines the fast path leaves out of the hash.
func withCreatedLine(data []byte, line string, dropID bool) []byte {
	var out []string
	for l := range strings.SplitSeq(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, `  "created": `):
			l = line
		case dropID && strings.HasPrefix(l, `  "id": `):
			continue
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// The id and created lines are outside the content hash, so they are the only bytes of a file the fast
// path does not vouch for by the hash. Whatever they hold, the fast path gives facts only when the full
// parse gives the same facts with the decided hash. Before the fix a created line could carry a second
// "candidate" member: Go's decoder keeps a duplicate key's first NumberMap entries (NumberMap appends,
// lookup takes the first), so the fast path read the injected bucket edges and reported the decided
// hash, where the full parse read the same edges and a content hash that is not the decided one.
func TestReview8CreatedLineCarriesNoFields(t *testing.T) {
	p := withEvidence(t, 3)
	data, sha := canonicalProposal(t, p)
	created := `  "created": "2026-11-30T03:00:00Z",`
	inject := `  "created": "2026-11-30T03:00:00Z", "candidate": {"buckets": {"L0": -20}, "cost": {"too_low": 9}}, "created": "2026-11-30T03:00:00Z",`
	cases := map[string][]byte{
		"canonical":                data,
		"no id":                    withCreatedLine(data, created, true),
		"injected candidate":       withCreatedLine(data, inject, false),
		"injected, no id":          withCreatedLine(data, inject, true),
		"injected evidence, no id": withCreatedLine(data, `  "created": "2026-11-30T03:00:00Z", "Evidence": [{"key": "forged"}], "created": "2026-11-30T03:00:00Z",`, true),
		"escaped created":          withCreatedLine(data, `  "created": "2026-11-30T03:00:00\u005a",`, false),
		"not a time":               withCreatedLine(data, `  "created": "yesterday",`, true),
		"empty created":            withCreatedLine(data, `  "created": "",`, true),
		"CRLF created":             withCreatedLine(data, created+"\r", false),
		"spaced created":           withCreatedLine(data, `  "created":  "2026-11-30T03:00:00Z",`, false),
		"BOM":                      append([]byte("\xef\xbb\xbf"), data...),
		"trailing object":          append(slices.Clone(data), []byte("{}")...),
		"trailing newline":         append(slices.Clone(data), '\n'),
		"id escaped":               bytes.Replace(data, []byte(`"id": "p-`), []byte(`"id": "p\u002d`), 1),
	}
	for name, d := range cases {
		fast, ok := canonicalFacts(d, sha)
		if !ok {
			continue
		}
		parsed, psha, err := parseProposal("p.json", d)
		if err != nil {
			t.Errorf("%s: the fast path gives facts, the full parse refuses the file: %v", name, err)
			continue
		}
		if psha != sha || fast.contentSHA != sha {
			t.Errorf("%s: the fast path says content %s, the full parse %s (decided %s)", name, short(fast.contentSHA), short(psha), short(sha))
		}
		if cs := Changes(&fast.candidate, &parsed.Candidate); len(cs) > 0 {
			t.Errorf("%s: the fast path's candidate differs from the parse's in %s", name, describeChanges(cs))
		}
		if !slices.Equal(fast.ledger, ledgerKeys(parsed)) {
			t.Errorf("%s: the fast path's keys %v, the parse's %v", name, fast.ledger, ledgerKeys(parsed))
		}
	}
	if _, ok := canonicalFacts(cases["no id"], sha); !ok {
		t.Errorf("the store's own file without its id line no longer takes the fast path")
	}
}

// The same through the store: a forger who logs an extra decision for the applied proposal (a bucket
// edge), writes the forged version, re-chains and re-signs, and carries that edge in the proposal's
// created line. The full parse finds the file edited after it was decided; so must the readers.
func TestReview8ForgedCandidateInTheCreatedLineIsRefused(t *testing.T) {
	s, dir := freshStore(t)
	p := decide(t, s, sampleProposal(t))
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
	st, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	apply := st.lines[len(st.lines)-1].Entry
	var sha string
	for _, d := range st.loggedDecisions(p.ID) {
		sha = d.ProposalSHA256
	}
	// the log without its apply, plus a decision of the same proposal (same hash) for bucket L0 -1
	var b bytes.Buffer
	for _, l := range st.lines[:len(st.lines)-1] {
		b.Write(l.Raw)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, LogFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ = loadState(dir)
	extra := LogEntry{Action: ActionAccept, Parent: 1, Proposal: p.ID, ProposalSHA256: sha, Change: "bucket L0 edge -1", Decision: weights.DecisionAccept, Reason: "forged"}
	if err := s.writeLog(st, s.buildLine(st, extra)); err != nil {
		t.Fatal(err)
	}
	w := p.Candidate
	w.Version, w.Parent = 2, 1
	w.Buckets.Edges[0] -= weights.Whole(1)
	forgedVersion := w.Marshal()
	apply.ResultSHA256 = fileSHA(forgedVersion)
	apply.Time = apply.Time.Add(1)
	forge(t, s, dir, 2, forgedVersion, func(e *LogEntry) { *e = apply })
	// the proposal: its canonical bytes, no id line, the forged edge in the created line
	path := filepath.Join(dir, ProposalsDir, p.ID+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edge := fmt.Sprint(w.Buckets.Edges[0].Float())
	data = withCreatedLine(data, `  "created": "2026-11-30T03:00:00Z", "candidate": {"buckets": {"L0": `+edge+`}}, "created": "2026-11-30T03:00:00Z",`, true)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := parseProposal(path, data); err != nil {
		t.Fatalf("the forged file should parse whole (and differ from the decided content): %v", err)
	}
	probs := joinProblems(s.Verify())
	if !strings.Contains(probs, "was edited after it was decided") {
		t.Fatalf("verify: %s", probs)
	}
	readersRefuse(t, dir, "was edited after it was decided")
}

// The memo's key frames the bytes and the strings it also depends on: two different (data, also) pairs
// never share a key. The decided hash comes from the log (proposal_sha256 is any JSON string, "\u0000"
// included), so "data, 0, also" alone let ("a", "\x00b") and ("a\x00", "b") meet.
func TestReview8MemoKeysAreUnambiguous(t *testing.T) {
	var m contentMemo[string]
	pairs := []struct {
		data string
		also []string
	}{{"a", []string{"\x00b"}}, {"a\x00", []string{"b"}}, {"a\x00\x00b", nil}, {"a", []string{"", "b"}}, {"a", []string{"\x00", "b"}}, {"a\x00", []string{"", "b"}}}
	for i, p := range pairs {
		if got := m.get([]byte(p.data), func() string { return fmt.Sprint(i) }, p.also...); got != fmt.Sprint(i) {
			t.Errorf("(%q, %q) was served the value of pair %s", p.data, p.also, got)
		}
	}
}

// Store.Entries and the state's lines are the caller's own: changing a slice or a pointer of an entry
// read once changes nothing another read gives (the memo keeps one parse per content, a shared read one
// state for the Stores of a run, and before them every read parsed anew).
func TestReview8EntriesAreTheCallersOwn(t *testing.T) {
	s, dir := freshStore(t)
	p := decide(t, s, withEvidence(t, 4))
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	// an entry with every list a line can hold (Store.Log writes what it is given)
	if err := s.Log(LogEntry{Action: ActionProposeAttempt, Change: "ambiguous +1", Reason: "all fields", Evidence: []string{"e"},
		Ledger: []string{"k"}, Harvested: []string{"h"}, HarvestedSHA256: []string{"s"},
		SuiteLossBefore: Loss(1), SuiteLossAfter: Loss(0.5)}); err != nil {
		t.Fatal(err)
	}
	a, b := twoSharing(t, dir)
	for name, pair := range map[string][2]*Store{"fresh reads": {s, s}, "a shared read": {a, b}} {
		first, err := pair[0].Entries()
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for _, e := range first {
			want = append(want, e.marshalLine())
		}
		changeEntries(t, first)
		again, err := pair[1].Entries()
		if err != nil {
			t.Fatal(err)
		}
		for i := range again {
			if a, b := again[i].marshalLine(), want[i]; !bytes.Equal(a, b) {
				t.Fatalf("%s: entry %d changed by another caller's edit:\n%s\nwant\n%s", name, i, a, b)
			}
		}
	}
	// the raw lines too (the chain hashes them)
	st1, _ := loadState(dir)
	st1.lines[0].Raw[0] = 'X'
	st2, _ := loadState(dir)
	if st2.lines[0].Raw[0] != '{' {
		t.Fatalf("a line's raw bytes changed by another state's edit: %q", st2.lines[0].Raw[:10])
	}
	mustVerify(t, s)
}

// twoSharing opens two Stores of dir that share one read, as a night's Stores do (OpenSharing).
func twoSharing(t *testing.T, dir string) (*Store, *Store) {
	t.Helper()
	var reads SharedReads
	var out [2]*Store
	for i := range out {
		s, err := OpenSharing(dir, clock, &reads)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out[0], out[1]
}

// changeEntries changes the first element of every slice and the value of every pointer of the entries,
// by reflection, so that a field added to LogEntry later is covered; it fails when one has none.
func changeEntries(t *testing.T, es []LogEntry) {
	t.Helper()
	touched := map[string]bool{}
	for i := range es {
		v := reflect.ValueOf(&es[i]).Elem()
		for j := range v.NumField() {
			f, name := v.Field(j), v.Type().Field(j).Name
			switch {
			case f.Kind() == reflect.Slice && f.Len() > 0:
				el := f.Index(0)
				if el.Kind() == reflect.Struct {
					el = el.Field(0)
				}
				el.Set(reflect.ValueOf("changed by a caller").Convert(el.Type()))
				touched[name] = true
			case f.Kind() == reflect.Pointer && !f.IsNil():
				f.Elem().SetFloat(99)
				touched[name] = true
			}
		}
	}
	v := reflect.TypeFor[LogEntry]()
	for j := range v.NumField() {
		if f := v.Field(j); (f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Pointer) && !touched[f.Name] {
			t.Errorf("no entry has a %s to change: the test needs one", f.Name)
		}
	}
}

// The memo holds a bounded number of bytes whatever the files: many distinct large logs in one process
// (verify --base over revisions, a night that rewrites its log, a test binary) keep at most
// maxMemoBytes of them, not maxMemoized × the log's 64 MiB limit.
func TestReview8MemoRetainsBoundedBytes(t *testing.T) {
	reset := func() {
		logMemo.mu.Lock()
		logMemo.m, logMemo.bytes = nil, 0
		logMemo.mu.Unlock()
	}
	reset()
	defer reset()
	const size = 2 << 20
	line := `{"serial":1,"lineage":"x","action":"init","time":"2026-01-01T00:00:00Z","parent":0,"reason":"` + strings.Repeat("r", size) + `","prev_hash":""}`
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 16 {
		data := []byte(strings.Replace(line, `"serial":1`, fmt.Sprintf(`"serial":%d`, i+1), 1) + "\n")
		if lines, _, _ := parseLog(data); len(lines) != 1 || !lines[0].OK || lines[0].Entry.Serial != i+1 {
			t.Fatalf("log %d: %+v", i, lines)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// a kept log is about its size (the decoded reason; the memo keeps no raw bytes)
	if limit := int64(maxMemoBytes + 2*size); kept > limit {
		t.Fatalf("the memo keeps %d MiB after 16 distinct %d MiB logs, want at most %d MiB", kept>>20, size>>20, limit>>20)
	}
	logMemo.mu.Lock()
	n, b := len(logMemo.m), logMemo.bytes
	logMemo.mu.Unlock()
	if n > maxMemoized || b > maxMemoBytes {
		t.Fatalf("memo holds %d entries, %d bytes", n, b)
	}
}

// Readers in goroutines, on one store (fresh and shared reads) and on a copy of it (same bytes, so the same memo entries), get
// the same answers, and a tampered copy is refused while the original is not: the memo is per process
// and keyed by content only, so two stores never see each other's files (run with -race).
func TestReview8ConcurrentReadersAndTwoStores(t *testing.T) {
	s, dir := freshStore(t)
	p := decide(t, s, withEvidence(t, 20))
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "weights")
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	s2, err := reopen(t, copyDir)
	if err != nil {
		t.Fatal(err)
	}
	a, b := twoSharing(t, dir)
	want, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		st := []*Store{s, s2, a, b}[i%4]
		wg.Go(func() {
			for range 3 {
				w, err := st.Active()
				if err != nil {
					errs <- err
					return
				}
				if cs := Changes(&w, &want); len(cs) > 0 {
					errs <- fmt.Errorf("a concurrent read differs in %s", describeChanges(cs))
				}
				if _, _, err := OpenActive(st.Dir, clock); err != nil {
					errs <- err
				}
				if probs := st.Verify(); len(probs) > 0 {
					errs <- fmt.Errorf("%s", joinProblems(probs))
				}
				if es, err := st.Entries(); err != nil || len(es) == 0 {
					errs <- fmt.Errorf("entries %d %v", len(es), err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// the copy's proposal forged (its id recomputed, so that it parses): the copy is refused, the
	// original, read after it with the same log bytes, is not
	path := filepath.Join(copyDir, ProposalsDir, p.ID+".json")
	forged := *p
	forged.Reason += " (edited)"
	forged.ID = forged.ComputeID()
	data, err := encodeIndented(forged.toJSON(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	readersRefuse(t, copyDir, "was edited after it was decided")
	mustVerify(t, s)
	if _, err := s.Active(); err != nil {
		t.Fatal(err)
	}
}

// A log entry's proposal is a file name under weights/proposals, never a path: a forged "../" one is a
// history problem, and nothing outside the store is read for it.
func TestAProposalIDIsNoPath(t *testing.T) {
	for _, id := range []string{"../../outside", `..\x`, "..", ""} {
		if _, ok := ProposalPath("/w", id); ok {
			t.Errorf("%q passed as a proposal file name", id)
		}
	}
	if p, ok := ProposalPath("/w", "p-0123456789ab"); !ok || p != filepath.Join("/w", ProposalsDir, "p-0123456789ab.json") {
		t.Errorf("a proposal id: %s %v", p, ok)
	}
	st := &state{dir: t.TempDir()}
	err := st.proposalMeaning(LogEntry{Action: ActionApply, Proposal: "../../../etc/passwd"}, &weights.Weights{})
	if err == nil || !strings.Contains(err.Error(), "not a proposal file name") {
		t.Errorf("a path as the applied proposal: %v", err)
	}
}
