package weights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Half marshals itself in points, in JSON and as text (2, -5, 2.5), never as the half-points it holds:
// a weight printed as 5 that means 2.5 is a trap for every reader of tune's JSON. See
// docs/decisions.md, "Architecture and output (issue 15)".

// MarshalJSON writes h as a number in points.
func (h Half) MarshalJSON() ([]byte, error) { return []byte(h.Plain()), nil }

// UnmarshalJSON reads a number in points; it must be a multiple of 0.5. A null leaves h as it is (the
// encoding/json convention: a caller that refuses nulls, as the proposal reader does, says so itself).
// A string, or a number that is not a multiple of 0.5, is a *json.UnmarshalTypeError, which
// encoding/json completes with the field's path.
func (h *Half) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	refuse := func(got string) error {
		return &json.UnmarshalTypeError{Value: got, Type: reflect.TypeFor[Half]()}
	}
	var n json.Number
	if len(data) == 0 || data[0] == '"' || json.Unmarshal(data, &n) != nil {
		return refuse(fmt.Sprintf("%.40s", data))
	}
	v, err := ParseHalf(string(n))
	if err != nil {
		return refuse("number " + string(n) + ", not a multiple of 0.5")
	}
	*h = v
	return nil
}

// MarshalText writes h in points (TOML, map keys, flags).
func (h Half) MarshalText() ([]byte, error) { return []byte(h.Plain()), nil }

// UnmarshalText reads points: "2", "-5", "+2.5".
func (h *Half) UnmarshalText(text []byte) error {
	v, err := ParseHalf(string(text))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// SignalWeight is a signal with the weight it carried: a fired signal of the scorer, a name:weight pair
// of a trace's signals=, a signal of a flagged task. Name is a string, not a Signal: a trace may name a
// signal no weights version knows.
type SignalWeight struct {
	Name   string `json:"name"`
	Weight Half   `json:"weight"`
}

// MarshalJSON writes {"name", "weight"} with the weight in points and the name readable
// ("components>=3"): json.Marshal would escape ">" whatever the caller's encoder says.
func (s SignalWeight) MarshalJSON() ([]byte, error) {
	type plain SignalWeight // without this method
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(plain(s))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// UnmarshalJSON reads what MarshalJSON writes; the weight must be a multiple of 0.5.
func (s *SignalWeight) UnmarshalJSON(data []byte) error {
	type plain SignalWeight
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		var name struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(data, &name)
		return fmt.Errorf("signal %q weight: %v", name.Name, err)
	}
	*s = SignalWeight(p)
	return nil
}
