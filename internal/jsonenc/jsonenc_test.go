package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
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

// Float's short-decimal path writes what strconv's shortest search writes (and so encoding/json), for
// every multiple of 0.001 up to ±2,000, for micro-units over the whole range the path takes, for
// decimals parsed from text, and at the edges of the path.
func TestFloatShortDecimals(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		if got, want := string(Float(nil, f)), string(stdlib(t, f)); got != want {
			t.Fatalf("Float(%v) = %s, want %s", f, got, want)
		}
	}
	for n := -2_000_000; n <= 2_000_000; n++ {
		f := float64(n) / 1000
		if got, want := string(Float(nil, f)), strconv.FormatFloat(f, 'f', -1, 64); got != want && f != 0 {
			t.Fatalf("Float(%d/1000) = %s, want %s", n, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		n := r.Int64N(1e15) - 5e14
		small := float64(n%1e9) / 1e6
		// The neighbours of a short decimal's double: f×10⁶ may still round to an integer there.
		for _, f := range []float64{float64(n) / 1e6, small, float64(n%1e7) / 1e3, math.Nextafter(small, 1e300), math.Nextafter(small, -1e300)} {
			if got, want := string(Float(nil, f)), strconv.FormatFloat(f, 'f', -1, 64); got != want && f != 0 && math.Abs(f) >= 1e-6 {
				t.Fatalf("Float(%v) = %s, want %s", f, got, want)
			}
		}
	}
	for _, s := range []string{"0.400", "-0.100", "0.000001", "0.0000015", "999999999.999999", "1000000000", "1e9", "123456.7", "0.1", "0.2", "0.3", "2.675", "1.005", "-0.000001"} {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		check(f)
	}
	for _, f := range []float64{1e-6, math.Nextafter(1e-6, 0), math.Nextafter(1e-6, 1), 1e9, math.Nextafter(1e9, 0), 0.1 + 0.2, 1.0 / 3, -2.5e-7} {
		check(f)
	}
}
