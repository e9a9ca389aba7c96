package scorer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/weights"
)

// resultJSON is the reference payload (level_scorer.py --json), in its key order, plus weights_version.
type resultJSON struct {
	RawScore         json.Number            `json:"raw_score"`
	AutoLevel        string                 `json:"auto_level"`
	FinalLevel       string                 `json:"final_level"`
	Creativity       string                 `json:"creativity"`
	DispatchSource   string                 `json:"dispatch_source"`
	Signals          []weights.SignalWeight `json:"signals"`
	ClampReason      *string                `json:"clamp_reason"`
	OverrideFragment *string                `json:"override_fragment"`
	DispatchHeader   string                 `json:"dispatch_header"`
	WeightsVersion   int                    `json:"weights_version"`
}

// MarshalJSON writes the reference field names, weights as plain numbers (2, -5, 2.5), and escapes
// non-ASCII text as \uXXXX like Python's json.dumps, so the bytes match the reference CLI's.
func (r Result) MarshalJSON() ([]byte, error) {
	signals := r.Signals
	if signals == nil {
		signals = []weights.SignalWeight{} // the reference prints [] for no signals
	}
	return marshalPython(resultJSON{
		RawScore:         json.Number(r.RawScore.Plain()),
		AutoLevel:        r.AutoLevel.String(),
		FinalLevel:       r.FinalLevel.String(),
		Creativity:       r.Creativity,
		DispatchSource:   r.DispatchSource,
		Signals:          signals,
		ClampReason:      r.ClampReason,
		OverrideFragment: r.OverrideFragment,
		DispatchHeader:   r.DispatchHeader,
		WeightsVersion:   r.WeightsVersion,
	})
}

// UnmarshalJSON reads what MarshalJSON writes (and the reference payload, whose weights_version is absent).
func (r *Result) UnmarshalJSON(data []byte) error {
	var j resultJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	raw, err := weights.ParseHalf(j.RawScore.String())
	if err != nil {
		return fmt.Errorf("raw_score: %v", err)
	}
	auto, err := weights.ParseLevel(j.AutoLevel)
	if err != nil {
		return fmt.Errorf("auto_level: %v", err)
	}
	final, err := weights.ParseLevel(j.FinalLevel)
	if err != nil {
		return fmt.Errorf("final_level: %v", err)
	}
	*r = Result{RawScore: raw, AutoLevel: auto, FinalLevel: final, Creativity: j.Creativity, DispatchSource: j.DispatchSource,
		Signals: j.Signals, ClampReason: j.ClampReason, OverrideFragment: j.OverrideFragment,
		DispatchHeader: j.DispatchHeader, WeightsVersion: j.WeightsVersion}
	return nil
}

// marshalPython encodes v compactly with Python's ensure_ascii escaping and without Go's HTML escaping.
func marshalPython(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return ASCIIEscape(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// ASCIIEscape rewrites JSON so that it is pure ASCII, as Python's json.dumps(ensure_ascii=True) writes it:
// every non-ASCII character and DEL become \uXXXX (a surrogate pair above U+FFFF). Outside strings JSON
// has only ASCII, so the rewrite is safe on any valid JSON text.
func ASCIIEscape(js []byte) []byte {
	i := 0
	for i < len(js) && js[i] < utf8.RuneSelf && js[i] != 0x7f {
		i++
	}
	if i == len(js) {
		return js
	}
	out := make([]byte, 0, len(js)+len(js)/4)
	out = append(out, js[:i]...)
	const hex = "0123456789abcdef"
	esc := func(u rune) {
		out = append(out, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
	}
	for i < len(js) {
		c := js[i]
		if c < utf8.RuneSelf && c != 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(js[i:])
		i += n
		if r > 0xffff {
			r -= 0x10000
			esc(0xd800 + (r>>10)&0x3ff)
			esc(0xdc00 + r&0x3ff)
			continue
		}
		esc(r)
	}
	return out
}

// IndentJSON indents compact JSON the way Python's json.dumps(indent=2) does.
func IndentJSON(compact []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
