package weights

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A Half reads and writes points, in JSON and as text; a SignalWeight keeps its name readable.
func TestHalfAndSignalWeightMarshalInPoints(t *testing.T) {
	sw := []SignalWeight{{Name: "components>=3", Weight: Half(5)}, {Name: "single-file", Weight: Whole(-3)}}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sw); err != nil {
		t.Fatal(err)
	}
	const want = `[{"name":"components>=3","weight":2.5},{"name":"single-file","weight":-3}]` + "\n"
	if b.String() != want {
		t.Fatalf("JSON %s, want %s", b.String(), want)
	}
	var back []SignalWeight
	if err := json.Unmarshal([]byte(want), &back); err != nil || len(back) != 2 || back[0] != sw[0] || back[1] != sw[1] {
		t.Fatalf("round trip %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"name":"x","weight":0.3}`), &back[0]); err == nil || !strings.Contains(err.Error(), `signal "x" weight`) {
		t.Errorf("0.3 points accepted or unclear error: %v", err)
	}
	txt, _ := Whole(-5).MarshalText()
	var h Half
	if string(txt) != "-5" || h.UnmarshalText([]byte("+2.5")) != nil || h != Half(5) {
		t.Errorf("text %q, parsed %v", txt, h)
	}
}

// TestHalfUnmarshalJSON: a weight is a JSON number of points, a multiple of 0.5; a string or a quarter
// point is a type error (encoding/json names the field); null leaves the value as it is, so the caller's
// own rule on nulls applies (the proposal reader refuses them by name).
func TestHalfUnmarshalJSON(t *testing.T) {
	var s struct {
		Delta Half `json:"delta"`
	}
	if err := json.Unmarshal([]byte(`{"delta":-2.5}`), &s); err != nil || s.Delta != -Half(5) {
		t.Errorf("-2.5: %v, %v", s.Delta, err)
	}
	for _, bad := range []string{`{"delta":"1"}`, `{"delta":0.25}`, `{"delta":true}`, `{"delta":{}}`} {
		var typ *json.UnmarshalTypeError
		err := json.Unmarshal([]byte(bad), &s)
		if !errors.As(err, &typ) || typ.Field != "delta" {
			t.Errorf("%s: %v, want a type error naming delta", bad, err)
		}
	}
	s.Delta = Whole(3)
	if err := json.Unmarshal([]byte(`{"delta":null}`), &s); err != nil || s.Delta != Whole(3) {
		t.Errorf("null: %v, %v", s.Delta, err)
	}
}
