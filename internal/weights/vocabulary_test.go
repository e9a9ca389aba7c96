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

// TestParseChangeLabel: the store replays logged attempts by reading back what ChangeLabel wrote.
func TestParseChangeLabel(t *testing.T) {
	for _, c := range []struct {
		kind  ChangeKind
		name  string
		delta Half
	}{{ChangeBucket, "L1", -Whole(1)}, {ChangeSignal, "ambiguous", Half(1)}, {ChangeSignal, "greenfield", -Whole(2) - Half(1)}} {
		label := ChangeLabel(c.kind, c.name, c.delta)
		kind, name, delta, err := ParseChangeLabel(label)
		if err != nil || kind != c.kind || name != c.name || delta != c.delta {
			t.Errorf("%q: got %v %q %v %v", label, kind, name, delta, err)
		}
	}
	for _, bad := range []string{"", "bucket L1 -1", "ambiguous", "ambiguous one", "ambiguous +0.25", "bucket L1 side +1"} {
		if _, _, _, err := ParseChangeLabel(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestDiffLabel: the spelling of a difference between two versions, as the apply and rollback lines of
// the evolution log record it (bucket edges without "edge"; costs named).
func TestDiffLabel(t *testing.T) {
	for _, c := range []struct {
		kind ChangeKind
		name string
		want string
	}{{ChangeSignal, "ambiguous", "ambiguous +0.5"}, {ChangeBucket, "L1", "bucket L1 +0.5"}, {ChangeCost, "too_low", "cost too_low +0.5"}} {
		if got := DiffLabel(c.kind, c.name, Half(1)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.kind, got, c.want)
		}
	}
}
