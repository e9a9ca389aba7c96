package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// withEvidence is sampleProposal carrying n flagged tasks, as a night's proposal over a long history does.
func withEvidence(t *testing.T, n int) *Proposal {
	p := sampleProposal(t)
	p.Evidence = nil
	for i := range n {
		p.Evidence = append(p.Evidence, FlaggedTask{MetaTimestamp: fmt.Sprintf("2026-03-%02dT10:%02d:00Z", 1+i%28, i%60),
			Title: fmt.Sprintf("fix \"task\" %d\nin auth.go", i), Level: "L1", Source: ".ldd/trace.log",
			Evidence: []string{"regression_followed"}, Key: fmt.Sprintf("2026-03-01T10:00:00Z#%012x", i*7919)})
	}
	return p
}

// The fast path reads exactly the facts the full parse gives, and only from a file that holds the decided
// content in the store's own form: a reformatted file, another content or a wrong id go to the full parse.
func TestCanonicalFactsAreTheParsesFacts(t *testing.T) {
	for _, n := range []int{0, 1, 40} {
		p := withEvidence(t, n)
		p.ID = p.ComputeID()
		data, err := encodeIndented(p.toJSON(true))
		if err != nil {
			t.Fatal(err)
		}
		parsed, sha, err := parseProposal("p.json", data)
		if err != nil {
			t.Fatal(err)
		}
		fast, ok := canonicalFacts(data, sha)
		if !ok {
			t.Fatalf("%d tasks: the store's own file did not take the fast path", n)
		}
		if cs := Changes(&fast.candidate, &parsed.Candidate); len(cs) > 0 || !slices.Equal(fast.ledger, ledgerKeys(parsed)) || fast.contentSHA != sha {
			t.Fatalf("%d tasks: fast %+v, parse %v %v %s", n, fast, parsed.Candidate.Signals, ledgerKeys(parsed), sha)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		edited := bytes.Replace(data, []byte(`"reason": "`), []byte(`"reason": "x`), 1)
		wrongID := bytes.Replace(data, []byte(`"id": "p-`), []byte(`"id": "p-0`), 1)
		noIdentity := regexpDrop(data, `  "id": `, `  "created": `)
		overlapping := append([]byte("{\n  \"id\": \",\n"), data[2:]...) // once a panic of every reader
		for name, c := range map[string]struct {
			data []byte
			want bool
		}{"overlapping id line": {overlapping, false}, "compact": {compact.Bytes(), false}, "edited": {edited, false}, "wrong id": {wrongID, false}, "no id or created": {noIdentity, true}} {
			if _, ok := canonicalFacts(c.data, sha); ok != c.want {
				t.Errorf("%d tasks, %s: fast path %v, want %v", n, name, ok, c.want)
			}
		}
		if _, ok := canonicalFacts(data, ""); ok {
			t.Errorf("%d tasks: fast path without a decided hash", n)
		}
	}
}

// regexpDrop drops the lines of data that start with one of the prefixes.
func regexpDrop(data []byte, prefixes ...string) []byte {
	var out []string
	for l := range strings.SplitSeq(string(data), "\n") {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(l, p) }) {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// The memo is keyed by content, so a file rewritten while a process runs — here a forged proposal put in
// place of the applied one right after a read — is judged anew by every later read: readers refuse it as
// before the memo.
func TestReadsJudgeAFileChangedSinceTheLastRead(t *testing.T) {
	s, dir := freshStore(t)
	p := decide(t, s, withEvidence(t, 30))
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Active(); err != nil { // the memo now holds the applied proposal's facts and the log
		t.Fatal(err)
	}
	path := filepath.Join(dir, ProposalsDir, p.ID+".json")
	forged := *p
	forged.Evidence = slices.Clone(p.Evidence)
	forged.Evidence[3].Title = strings.Replace(forged.Evidence[3].Title, "3", "8", 1) // same length
	data, err := encodeIndented(forged.toJSON(false))
	if err != nil {
		t.Fatal(err)
	}
	// the id line computed from the forged content, so that the file parses: only the logged hash differs
	data = bytes.Replace(data, []byte("{\n"), []byte("{\n  \"id\": \""+forged.ComputeID()+"\",\n"), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil { // in place, at once: same inode, likely the same mtime
		t.Fatal(err)
	}
	readersRefuse(t, dir, "was edited after it was decided")
}

// Listing proposals reads each file's head (id, created, decision) and parses whole only those asked
// for: the order is the full parse's (created, newest first; ties by id), a refused proposal whose
// evidence would not parse no longer stands in the way of the pending one, and a file that is not a
// proposal object at all is still an error naming it.
func TestProposalListingReadsHeads(t *testing.T) {
	s, _ := freshStore(t)
	at := func(day int) *Proposal {
		p := withEvidence(t, 3)
		p.Created = p.Created.AddDate(0, 0, day)
		p.Reason = fmt.Sprintf("day %d", day)
		return p
	}
	refused := at(1)
	refused.Decision = "none"
	for _, p := range []*Proposal{at(0), refused, at(2), at(2)} {
		if _, _, err := WriteProposal(s.ProposalsPath(), p); err != nil {
			t.Fatal(err)
		}
	}
	tie := at(2)
	tie.Reason = "day 2, the other"
	if _, _, err := WriteProposal(s.ProposalsPath(), tie); err != nil {
		t.Fatal(err)
	}
	all, err := s.proposalHeads()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range all {
		got = append(got, p.Created.Format(time.DateOnly)+" "+p.ID)
		if whole, err := ReadProposal(p.path); err != nil || !whole.Created.Equal(p.Created) || whole.ID != p.ID {
			t.Fatalf("head %+v, whole %v %v", p, whole, err)
		}
	}
	want := slices.Clone(got)
	slices.SortStableFunc(want, func(a, b string) int { // created descending, then id ascending
		if c := strings.Compare(b[:10], a[:10]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(got) != 4 || !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// the refused proposal's evidence broken (a null title): only a whole parse would see it
	path := filepath.Join(s.ProposalsPath(), refused.ID+".json")
	data, _ := os.ReadFile(path)
	broken := bytes.Replace(data, []byte(`"title": "fix`), []byte(`"title": null, "x": "fix`), 1)
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := s.NewestPendingProposal()
	if err != nil || p.ID != all[0].ID {
		t.Fatalf("newest pending %v, %v; want %s", p, err, all[0].ID)
	}
	if newest, err := s.NewestProposal(); err != nil || newest.ID != all[0].ID {
		t.Errorf("newest %v, %v; want %s", newest, err, all[0].ID)
	}
	if err := os.WriteFile(filepath.Join(s.ProposalsPath(), "p-notjson.json"), []byte("{\n  \"id\": \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewestPendingProposal(); err == nil || !strings.Contains(err.Error(), "p-notjson.json") {
		t.Errorf("a file that is not a proposal object: %v", err)
	}
}

// FuzzCanonicalFacts: whatever the bytes and the logged hash, the fast path never panics, and when it
// takes a file the full parse of that file (when it parses) gives the same facts and the same hash.
func FuzzCanonicalFacts(f *testing.F) {
	p := sampleProposal(f)
	p.ID = p.ComputeID()
	data, err := encodeIndented(p.toJSON(true))
	if err != nil {
		f.Fatal(err)
	}
	sha := p.ContentSHA256()
	f.Add(data, sha)
	f.Add(data, sha[:5])
	f.Add([]byte("{\n  \"id\": \"p-\",\n}"), "")
	f.Add([]byte("{\n"), sha)
	f.Fuzz(func(t *testing.T, data []byte, decided string) {
		fast, ok := canonicalFacts(data, decided)
		if !ok {
			return
		}
		if fast.contentSHA != decided {
			t.Fatalf("fast path hash %s, decided %s", fast.contentSHA, decided)
		}
		whole, wholeSHA, err := parseProposal("fuzz.json", data)
		if err != nil {
			return // a forged log's canonical-but-invalid file: see docs/decisions.md#store-reads-by-content
		}
		if wholeSHA != decided || len(Changes(&whole.Candidate, &fast.candidate)) > 0 || !slices.Equal(ledgerKeys(whole), fast.ledger) {
			t.Fatalf("fast %+v, whole %s %v %v", fast, wholeSHA, whole.Candidate.Signals, ledgerKeys(whole))
		}
	})
}
