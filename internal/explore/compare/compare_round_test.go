package compare

import (
	"encoding/json"
	"testing"
)

// TestRoundHasNoFloatNoise: an e-value keeps 4 significant digits and its JSON is the 4-digit decimal,
// at every size (explore review: 1.3390000000000005e+206 and 1.0000000000000006e+300 before).
func TestRoundHasNoFloatNoise(t *testing.T) {
	for e, want := range map[float64]string{
		1.33904e206: "1.339e+206", 1e300: "1e+300", 16.4812: "16.48", 0.000123456: "0.0001235", 0: "0", 9999.6: "10000",
	} {
		got, err := json.Marshal(round(e))
		if err != nil || string(got) != want {
			t.Errorf("round(%g) marshals to %s (%v), want %s", e, got, err, want)
		}
	}
}
