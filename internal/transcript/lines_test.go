package transcript

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

type skipEvent struct {
	Line, Lines int
	Reason      string
}

// readAll runs a LineReader over input and returns the records (as strings, with their first line)
// and the skip events.
func readAll(t testing.TB, input string, noMulti bool, bufSize int) (recs []string, lines []int, skips []skipEvent, c LineCounts) {
	t.Helper()
	lr := NewLineReader(iotest.OneByteReader(strings.NewReader(input)), bufSize)
	if len(input) > 1<<16 {
		lr = NewLineReader(strings.NewReader(input), bufSize)
	}
	lr.NoMultiLine = noMulti
	lr.OnSkip = func(line, n int, reason string) { skips = append(skips, skipEvent{line, n, reason}) }
	for {
		rec, line, ok := lr.Next()
		if !ok {
			break
		}
		recs = append(recs, string(rec))
		lines = append(lines, line)
	}
	if err := lr.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, lines, skips, lr.Counts()
}

func TestLineReaderRecordsAndReasons(t *testing.T) {
	input := strings.Join([]string{
		`{"a":1}`,         // 1 record
		``,                // 2 blank
		`  {"b":2}  `,     // 3 record, trimmed
		`"massive error"`, // 4 not an object
		`42`,              // 5
		`{`,               // 6 pretty-printed record over 6..9
		`  "c": {"d": [1, 2]},`,
		`  "e": "}{"`,
		`}`,
		`{"cut": "in the mid`, // 10 truncated inside a string
		`{"open": {"x": 1},`,  // 11 truncated: the next record starts in column 0
		`{"f":3}`,             // 12 record
		"{\"g\":4}\r",         // 13 record with CRLF
		`{"h": 1} trailing`,   // 14 malformed
		`{"last": [1, 2`,      // 15 truncated at EOF (no newline)
	}, "\n")
	recs, lines, skips, c := readAll(t, input, false, 4096)
	wantRecs := []string{`{"a":1}`, `{"b":2}`, "{\n  \"c\": {\"d\": [1, 2]},\n  \"e\": \"}{\"\n}", `{"f":3}`, `{"g":4}`}
	if fmt.Sprint(recs) != fmt.Sprint(wantRecs) {
		t.Errorf("records:\n%q\nwant\n%q", recs, wantRecs)
	}
	if fmt.Sprint(lines) != fmt.Sprint([]int{1, 3, 6, 12, 13}) {
		t.Errorf("record lines %v", lines)
	}
	wantSkips := []skipEvent{
		{4, 1, ReasonNotObject}, {5, 1, ReasonNotObject}, {10, 1, ReasonTruncated},
		{11, 1, ReasonTruncated}, {14, 1, ReasonMalformed}, {15, 1, ReasonTruncated},
	}
	if fmt.Sprint(skips) != fmt.Sprint(wantSkips) {
		t.Errorf("skips:\n%v\nwant\n%v", skips, wantSkips)
	}
	want := LineCounts{Lines: 15, Blank: 1, Records: 5, MultiLine: 1, MultiLineLines: 4, Skipped: 6}
	if c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
}

func TestLineReaderCCUsageModeDoesNotReassemble(t *testing.T) {
	recs, _, skips, _ := readAll(t, "{\n\"a\": 1\n}\n{\"b\":2}\n", true, 4096)
	if fmt.Sprint(recs) != `[{"b":2}]` {
		t.Errorf("records %q", recs)
	}
	want := []skipEvent{{1, 1, ReasonTruncated}, {2, 1, ReasonNotObject}, {3, 1, ReasonNotObject}}
	if fmt.Sprint(skips) != fmt.Sprint(want) {
		t.Errorf("skips %v, want %v", skips, want)
	}
}

// TestLineReaderLongLines reads lines far larger than the initial buffer (transcript lines with
// base64 images reach several MB; bufio.Scanner's default limit is 64 KB).
func TestLineReaderLongLines(t *testing.T) {
	big := `{"data":"` + strings.Repeat("x", 5<<20) + `"}`
	input := `{"a":1}` + "\n" + big + "\n" + `{"b":2}`
	recs, _, skips, c := readAll(t, input, false, 4096)
	if len(recs) != 3 || recs[1] != big || recs[2] != `{"b":2}` || len(skips) != 0 || c.Lines != 3 {
		t.Fatalf("got %d records (skips %v, counts %+v)", len(recs), skips, c)
	}
}

// checkLineAccounting asserts that every physical line is accounted for exactly once.
func checkLineAccounting(t testing.TB, input string, recs []string, skips []skipEvent, c LineCounts) {
	t.Helper()
	physical := strings.Count(input, "\n")
	if len(input) > 0 && !strings.HasSuffix(input, "\n") {
		physical++
	}
	skipped := 0
	for _, s := range skips {
		if s.Lines < 1 || s.Line < 1 || s.Line > physical {
			t.Fatalf("bad skip event %+v (%d lines)", s, physical)
		}
		skipped += s.Lines
	}
	if c.Lines != physical {
		t.Fatalf("counted %d lines, input has %d", c.Lines, physical)
	}
	if got := c.Blank + (c.Records - c.MultiLine) + c.MultiLineLines + skipped; got != physical {
		t.Fatalf("lines do not add up: blank %d + single %d + multi-line %d + skipped %d = %d, want %d",
			c.Blank, c.Records-c.MultiLine, c.MultiLineLines, skipped, got, physical)
	}
	if c.Records != len(recs) || c.Skipped != len(skips) {
		t.Fatalf("counts %+v vs %d records, %d skips", c, len(recs), len(skips))
	}
	for _, r := range recs {
		if r == "" || r[0] != '{' || r[len(r)-1] != '}' {
			t.Fatalf("record %q is not an object's text", r)
		}
	}
}

// FuzzReadLines: the reader never panics, every record looks like an object, and every physical
// line is accounted for once (blank, record, part of a pretty-printed record, or skipped).
func FuzzReadLines(f *testing.F) {
	f.Add("{\"a\":1}\n\n{\n \"b\": 2\n}\n[1]\n{\"cut\n")
	f.Add("{\"a\":\"\\\"}\"}\r\n{\n\"x\":\"y\"\n{\"z\":1}")
	f.Add("}\n{\n}}\n{\"a\":[1,{\"b\":2}]}")
	f.Fuzz(func(t *testing.T, input string) {
		for _, noMulti := range []bool{false, true} {
			recs, _, skips, c := readAll(t, input, noMulti, 4096)
			checkLineAccounting(t, input, recs, skips, c)
		}
	})
}

func TestLineReaderAccountingOnSample(t *testing.T) {
	res := scanOrFail(t, daily, testdataRoot)
	c := res.Lines
	skippedLines := res.Skipped[ReasonNotObject] + res.Skipped[ReasonTruncated]
	if c.Blank+(c.Records-c.MultiLine)+c.MultiLineLines+skippedLines != c.Lines {
		t.Errorf("sample lines do not add up: %+v skipped %v", c, res.Skipped)
	}
	if c.Lines != 10174 || res.Skipped[ReasonNotObject] != 3 {
		t.Errorf("sample: %+v, skipped %v; want 10174 lines, 3 that are not objects", c, res.Skipped)
	}
	if !bytes.Contains([]byte(fmt.Sprint(res.Warnings)), []byte("edge_cases.jsonl 13 not-object")) {
		t.Errorf("warnings do not name edge_cases.jsonl line 13: %v", res.Warnings)
	}
}
