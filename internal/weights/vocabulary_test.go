package weights

import (
	"encoding/json"
	"testing"

	"github.com/BurntSushi/toml"
)

// The named words marshal as the bare strings the files have always held.
func TestVocabularyMarshalsAsItsWord(t *testing.T) {
	b, err := json.Marshal(struct {
		D Decision   `json:"decision"`
		K ChangeKind `json:"kind"`
	}{DecisionHalve, ChangeBucket})
	if err != nil || string(b) != `{"decision":"halve","kind":"bucket"}` {
		t.Fatalf("%s %v", b, err)
	}
	var v struct {
		D Decision `toml:"decision"`
	}
	if _, err := toml.Decode(`decision = "revert"`, &v); err != nil || v.D != DecisionRevert {
		t.Fatalf("%+v %v", v, err)
	}
	for d, want := range map[Decision]bool{DecisionAccept: true, DecisionHalve: true, DecisionRevert: false, DecisionNone: false, "": false} {
		if d.Applicable() != want {
			t.Errorf("%q.Applicable() = %v", d, !want)
		}
	}
}

// TestChangeLabel: a bucket change names its edge as such, the way the evolve attempts table and the
// proposal report name it, so the step table above them agrees.
func TestChangeLabel(t *testing.T) {
	if got := ChangeLabel(ChangeBucket, "L1", -Whole(1)); got != "bucket L1 edge -1" {
		t.Errorf("bucket: %q", got)
	}
	if got := ChangeLabel(ChangeSignal, "ambiguous", Whole(1)+Half(1)); got != "ambiguous +1.5" {
		t.Errorf("signal: %q", got)
	}
}
