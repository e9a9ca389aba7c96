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
