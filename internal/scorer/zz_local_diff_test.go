package scorer

// LOCAL ONLY, never committed: differential test against the reconstructed Python reference.

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

func TestLocalDiff(t *testing.T) {
	in := os.Getenv("DIFF_IN")
	if in == "" {
		t.Skip()
	}
	w := referenceWeights(t)
	fi, _ := os.Open(in)
	fo, _ := os.Open(os.Getenv("DIFF_OUT"))
	si := bufio.NewScanner(fi)
	si.Buffer(make([]byte, 1<<20), 1<<24)
	so := bufio.NewScanner(fo)
	so.Buffer(make([]byte, 1<<20), 1<<24)
	n, bad := 0, 0
	for si.Scan() && so.Scan() {
		n++
		var rec struct {
			Prompt  string   `json:"prompt"`
			History []string `json:"history"`
		}
		json.Unmarshal(si.Bytes(), &rec)
		d := Detect(rec.Prompt, rec.History)
		got, _ := json.Marshal(d.Score(w))
		var want struct {
			Ack bool `json:"implicit_ack"`
		}
		json.Unmarshal(so.Bytes(), &want)
		diffs := compareReference(t, so.Bytes(), got)
		if want.Ack != d.ImplicitAck {
			diffs = append(diffs, "implicit_ack")
		}
		if len(diffs) > 0 {
			bad++
			if bad < 15 {
				t.Errorf("line %d %q: %v", n, rec.Prompt, diffs)
			}
		}
	}
	t.Logf("%d/%d differ", bad, n)
}
