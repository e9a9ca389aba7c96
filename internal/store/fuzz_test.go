package store

import (
	"bytes"
	"testing"
)

// FuzzParseSum: any input either fails with a line-numbered error or round-trips through marshalSum when
// its header is consistent.
func FuzzParseSum(f *testing.F) {
	f.Add([]byte("h1:KN8ewOBmZhd6WzP/dOKC6pIbFAlEx/84FgQjosk5rO0=\nv0001.toml h1:hNQ0GxljS2Eown+rhHRDp/gmy8Uv/y8uTJIKdJgUZ5M=\n"))
	f.Add([]byte("hello\n"))
	f.Add([]byte(""))
	f.Add(marshalSum(sumOf([]versionFile{{Name: "v0001.toml", Data: []byte("x")}, {Name: "v0002.toml", Data: []byte("y")}})))
	f.Fuzz(func(t *testing.T, data []byte) {
		header, entries, err := parseSum(data)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte("line ")) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		if header == sumHeader(entries) {
			again := marshalSum(entries)
			h2, e2, err := parseSum(again)
			if err != nil || h2 != header || len(e2) != len(entries) {
				t.Fatalf("round trip: %v %q", err, again)
			}
		}
	})
}

// FuzzParseLog: every line is accounted for (parsed or reported), and a verify over any log never panics.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte(`{"serial":1,"lineage":"6027d20ce8aea0da","action":"init","time":"2026-12-01T03:00:00Z","parent":0,"result":1,"prev_hash":""}` + "\n"))
	f.Add([]byte("{\n"))
	f.Add([]byte(`{"serial":2,"action":"bogus","time":"x"}`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, bad, _ := parseLog(data)
		n := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			n++
		}
		if len(lines) != n {
			t.Fatalf("%d lines for %d newline-separated lines", len(lines), n)
		}
		ok := 0
		for _, l := range lines {
			if l.OK {
				ok++
			}
		}
		if len(lines)-ok > len(bad) {
			t.Fatalf("%d unparsed lines but %d problems", len(lines)-ok, len(bad))
		}
		st := &state{dir: "fuzz", files: []versionFile{{Version: 1, Name: "v0001.toml", Data: []byte("x"), SHA: fileSHA([]byte("x"))}},
			logExists: true, lines: lines, logBad: bad, logComplete: true}
		_ = st.verify()
		_ = st.active()
	})
}

// FuzzParsePending: a marker either parses completely or is refused; never a half-filled operation.
func FuzzParsePending(f *testing.F) {
	f.Add([]byte(`{"op":"apply","serial":4,"lineage":"x","started":"2026-12-01T03:00:00Z","writes":[{"step":"version","path":"v0004.toml","content":"x"}],"prev_sum":"","new_sum":"","entry":"{}"}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`{"op":"apply"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		op, err := parsePending(data)
		if err == nil && (op.Op == "" || op.Serial <= 0 || op.Entry == "") {
			t.Fatalf("accepted an incomplete marker: %+v", op)
		}
	})
}
