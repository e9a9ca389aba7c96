package textfmt

import (
	"bytes"
	"io"
	"testing"
)

// The title: writes the clipboard (OSC 52, ended by BEL) and clears the screen (CSI 2J).
const hostileTitle = "fix \x1b]52;c;aGVsbG8=\x07 \x1b[2J done \u009b31m"

func TestEscapesShowControlCharacters(t *testing.T) {
	want := `fix \x1b]52;c;aGVsbG8=\x07 \x1b[2J done \u009b31m`
	if got := Terminal(hostileTitle); got != want {
		t.Errorf("Terminal: %q, want %q", got, want)
	}
	if got := Markdown(hostileTitle + "\r"); got != want+`\x0d` {
		t.Errorf("Markdown: %q", got)
	}
	// Bidirectional controls are shown, not obeyed: "\u202e" reverses what follows on screen.
	if got := Markdown("ok \u202etxt.exe\u2066x\u2069\u200f\u061c"); got != `ok \u202etxt.exe\u2066x\u2069\u200f\u061c` {
		t.Errorf("bidi: %q", got)
	}
	for _, s := range []string{"plain", "tab\tand\nnewline", "ünïcode → ok", "\u00a0nbsp", "— … → ‘quotes’ “x” • ←", "عربي"} {
		if Terminal(s) != s || Markdown(s) != s {
			t.Errorf("%q was changed", s)
		}
	}
	var out bytes.Buffer
	w := TerminalWriter(&out)
	io.WriteString(w, "title: "+hostileTitle+"\n")
	io.WriteString(w, EraseLine)
	if got := out.String(); got != "title: "+want+"\n"+EraseLine {
		t.Errorf("TerminalWriter: %q", got)
	}
	if bytes.Count(out.Bytes(), []byte{0x1b}) != 1 || bytes.IndexByte(out.Bytes(), 0x07) >= 0 {
		t.Errorf("a raw ESC or BEL got through: %q", out.Bytes())
	}
}

func BenchmarkTerminalWriter(b *testing.B) {
	line := []byte(`{"source":"t.log","line":1,"task":"fix the login → session bug","loops":["inner"],"loss_final":0.02}` + "\n")
	buf := bytes.Repeat(line, 600)
	w := TerminalWriter(io.Discard)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		w.Write(buf)
	}
}

// FuzzFirstControl: the eight-bytes-at-a-time scan finds what a byte loop finds.
func FuzzFirstControl(f *testing.F) {
	f.Add([]byte(hostileTitle), false)
	f.Add([]byte("plain text\nwith a newline\x7f and \xc2\x9b"), true)
	f.Add([]byte("→ \u202e rtl \u2066 \u200f \u061c \xe2\x80"), false)
	f.Fuzz(func(t *testing.T, b []byte, cr bool) {
		want := -1
		for i, c := range b {
			if isControl(b, i, c, cr) {
				want = i
				break
			}
		}
		if got := firstControl(b, cr); got != want {
			t.Fatalf("firstControl(%q) = %d, want %d", b, got, want)
		}
	})
}

// A value inside one line of tune's layout stays on it: a log named "a\ntune: note: …" cannot print a
// line of its own making in a warning or a header (the trace review).
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain.log":                          "plain.log",
		"a\ntune: note: 0 warnings\n.log":    `a\ntune: note: 0 warnings\n.log`,
		"over\rwritten":                      `over\rwritten`,
		"crlf\r\n":                           `crlf\r\n`,
		"tab\tstays (the layout's own tabs)": "tab\tstays (the layout's own tabs)",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
