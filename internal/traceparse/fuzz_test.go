package traceparse_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// physicalLines counts lines the plain way: each "\r\n", "\r" or "\n" ends one, and bytes after the
// last line end are one more.
func physicalLines(data []byte) int {
	n := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			n++
		case '\n':
			n++
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' && data[len(data)-1] != '\r' {
		n++
	}
	return n
}

// FuzzParse feeds whole logs: no panic, every line accounted for (read == parsed + skipped, and read
// is the number of physical lines), the result encodes as JSON (each entry's fields exactly as a map), and ReadLast(n) is the last n tasks
// of Parse. The seed corpus in testdata/fuzz/FuzzParse holds the 25 real logs.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"\n\r\n\r",
		"2026-04-22T12:00:00Z  meta  L1/diagnostic  task=\"a\nb\"\n2026-04-22T12:00:01Z  inner  close\n",
		"\ufeff2026-04-22T12:00:00Z\tmeta\tL0/reflex\r2026-04-22T12:00:01Z inner k=1 loss=0.5 epoch=x\r\n",
		"x ⟪LDD-TRACE-v1⟫2026-04-22T12:00:00Z  inner  k=1  action=don't\n2026-04-22T12:00:02Z  meta  close",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := traceparse.Parse(bytes.NewReader(data), "fuzz.log")
		if err != nil {
			t.Fatal(err)
		}
		checkAccounting(t, res)
		if want := physicalLines(data); res.Lines.Read != want {
			t.Fatalf("read %d lines, the data has %d", res.Lines.Read, want)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
		for _, e := range entries(res) {
			sameJSONAsMap(t, e.Fields)
		}
		path := filepath.Join(dir, "fuzz.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3} {
			checkReadLast(t, path, data, n)
		}
	})
}
