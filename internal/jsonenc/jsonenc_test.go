package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func stdlib(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var stringSeeds = []string{"", "plain", `quote " and \ backslash`, "<a href='x'>&amp;</a>", "tab\tnew\nline\rcr\bbs\fff\x00\x01\x1f\x7f",
	"→ Δloss ⟪LDD-TRACE-v1⟫", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "emoji 🙂 and \U0010FFFF", "\xed\xa0\x80 surrogate"}

func TestStringIsEncodingJSON(t *testing.T) {
	for _, s := range stringSeeds {
		if got, want := String(nil, s), stdlib(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func TestFloatIsEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1.0 / 3, 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, 1.5e300, -2.5e-10,
		123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.000123} {
		if got, want := Float(nil, f), stdlib(t, f); !bytes.Equal(got, want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
	if got := Float(nil, math.NaN()); string(got) != "null" {
		t.Errorf("NaN: %s", got)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(nil, s), stdlib(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func FuzzFloat(f *testing.F) {
	for _, v := range []float64{0, 1, 1e-7, 1e21, 0.1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return
		}
		if got, want := Float(nil, v), stdlib(t, v); !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s, want %s", v, got, want)
		}
	})
}

// plainWord is exact for every byte value in every place, next to the edge values of its bit tricks.
func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	for _, bg := range []byte{'a', 0x20, 0x21, 0x7f, '"' + 1, '\\' + 1, '0'} {
		for pos := range 8 {
			for c := range 256 {
				b := []byte{bg, bg, bg, bg, bg, bg, bg, bg}
				b[pos] = byte(c)
				if got, want := plainWord(word(string(b))), plain(byte(c)); got != want {
					t.Fatalf("plainWord(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
