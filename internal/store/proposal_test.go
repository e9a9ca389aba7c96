package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

func loadReference(t testing.TB) weights.Weights {
	t.Helper()
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// sampleProposal is +1 on ambiguous measured against v0001, with two flagged tasks.
func sampleProposal(t testing.TB) *Proposal {
	w := loadReference(t)
	cand := w
	cand.Signals[weights.Ambiguous] += weights.Whole(1)
	p := 0.012
	return &Proposal{
		Created:   time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
		Parent:    1,
		Decision:  weights.DecisionAccept,
		Candidate: cand,
		Steps: []ProposalStep{{
			Kind: "signal", Signal: "ambiguous", Delta: weights.Whole(1), Decision: weights.DecisionAccept,
			SuiteLossBefore: 0.5, SuiteLossAfter: 0.25, Counts: &TwoByTwo{3, 1, 0, 16}, FisherP: &p, Confidence: "provisional",
		}},
		Evidence: []FlaggedTask{
			{MetaTimestamp: "2026-11-20T10:00:00Z", Title: "refactor <auth> flow", Level: "L1", Source: "a/.ldd/trace.log",
				Evidence: []string{"regression_followed"}, Prompt: "maybe refactor the auth flow somehow"},
			{MetaTimestamp: "2026-11-21T10:00:00Z", Title: "tweak thing", Level: "L0", Source: "a/.ldd/trace.log",
				Evidence: []string{"regression_of"}},
		},
		SuiteLossBefore: 0.5,
		SuiteLossAfter:  0.25,
		Reason:          "+1 ambiguous: 2 low-side regressions",
		Confidence:      "provisional",
	}
}

func TestProposalRoundTripIsByteStable(t *testing.T) {
	p := sampleProposal(t)
	dir := t.TempDir()
	path, created, err := WriteProposal(dir, p)
	if err != nil || !created {
		t.Fatalf("WriteProposal: created=%v err=%v", created, err)
	}
	if filepath.Base(path) != p.ID+".json" || !strings.HasPrefix(p.ID, "p-") || len(p.ID) != 14 {
		t.Fatalf("path %s id %s", path, p.ID)
	}
	first, _ := os.ReadFile(path)
	if !bytes.Contains(first, []byte(`"components>=3": 2`)) || !bytes.Contains(first, []byte("\n  \"parent\": 1,")) {
		t.Errorf("unexpected layout:\n%s", first)
	}
	got, err := ReadProposal(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Candidate.Signals != p.Candidate.Signals || got.Candidate.Buckets != p.Candidate.Buckets || got.Candidate.Cost != p.Candidate.Cost {
		t.Errorf("candidate changed on round trip: %+v", got.Candidate)
	}
	again, err := got.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Errorf("re-marshal differs:\n%s\n---\n%s", first, again)
	}
}

func TestProposalIDIgnoresCreatedAndWriteIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	a, b := sampleProposal(t), sampleProposal(t)
	b.Created = b.Created.Add(24 * time.Hour)
	pa, ca, err := WriteProposal(dir, a)
	if err != nil || !ca {
		t.Fatal(err)
	}
	pb, cb, err := WriteProposal(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID || pa != pb || cb {
		t.Errorf("same content gave id %s/%s created=%v", a.ID, b.ID, cb)
	}
	c := sampleProposal(t)
	c.Candidate.Signals[weights.Ambiguous] += 1
	c.ComputeID()
	if c.ComputeID() == a.ID {
		t.Error("different candidate gave the same id")
	}
}

func TestReadProposalErrors(t *testing.T) {
	p := sampleProposal(t)
	good, _ := p.MarshalJSON()
	cases := map[string]struct{ data, want string }{
		"syntax":             {"{\n  \"parent\": 1,\n  oops\n}", "x.json: line 3"},
		"unknown":            {`{"parent":1,"decision":"accept","bogus":1}`, `unknown field "bogus"`},
		"decision":           {strings.Replace(string(good), `"decision": "accept"`, `"decision": "maybe"`, 1), `decision "maybe"`},
		"half":               {strings.Replace(string(good), `"ambiguous": 3`, `"ambiguous": 3.25`, 1), "candidate.signals.\"ambiguous\": 3.25 is not a multiple of 0.5"},
		"missing":            {strings.Replace(string(good), `"greenfield": 3,`, ``, 1), `candidate.signals."greenfield": missing`},
		"edited":             {strings.Replace(string(good), `"ambiguous": 3`, `"ambiguous": 4`, 1), "does not match the content"},
		"no parent":          {strings.Replace(string(good), `"parent": 1,`, ``, 1), "parent: missing"},
		"null loss":          {strings.Replace(string(good), `"suite_loss_after": 0.25,`, `"suite_loss_after": null,`, 1), "suite_loss_after: null"},
		"null weight":        {strings.Replace(string(good), `"ambiguous": 3`, `"ambiguous": null`, 1), `candidate.signals.ambiguous: null`},
		"null step delta":    {strings.Replace(string(good), `"delta": 1`, `"delta": null`, 1), `steps[0].delta: null`},
		"quarter step delta": {strings.Replace(string(good), `"delta": 1`, `"delta": 0.25`, 1), `steps.delta: want a number of points (a multiple of 0.5), got number 0.25, not a multiple of 0.5`},
		"string step delta":  {strings.Replace(string(good), `"delta": 1`, `"delta": "1"`, 1), `steps.delta: want a number of points (a multiple of 0.5), got "1"`},
		"no evidence title":  {strings.Replace(string(good), `"title": "tweak thing",`, ``, 1), `evidence[1].title: missing`},
		"no candidate cost":  {strings.Replace(string(good), `"cost":`, `"costs":`, 1), `unknown field "costs"`},
		"negative e-value":   {strings.Replace(string(good), `"delta": 1`, `"delta": 1, "e_value": -3`, 1), `steps[0].e_value -3: want a number ≥ 0`},
	}
	for name, c := range cases {
		_, err := ParseProposal("x.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

func FuzzParseProposal(f *testing.F) {
	good, _ := sampleProposal(f).MarshalJSON()
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"candidate":{"signals":{"greenfield":1}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProposal("fuzz.json", data)
		if err != nil {
			return
		}
		out, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseProposal("again.json", out)
		if err != nil {
			t.Fatalf("re-read of canonical form failed: %v\n%s", err, out)
		}
		out2, _ := q.MarshalJSON()
		if !bytes.Equal(out, out2) {
			t.Fatalf("canonical form not stable:\n%s\n%s", out, out2)
		}
	})
}
