package traceout

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendIndent: on any valid JSON, compacted (what AppendTask writes), appendIndent writes what
// json.Indent writes.
func FuzzAppendIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[],"b":{},"c":[1,{"d":"x\"y\\\\"}],"e":null}`, `"s"`, `[[[]]]`, `{"k":"a:b,{c}[d]"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, data) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "    ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndent(nil, compact.Bytes(), "    ", "  "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%s:\n got %s\nwant %s", compact.Bytes(), got, want.Bytes())
		}
	})
}
