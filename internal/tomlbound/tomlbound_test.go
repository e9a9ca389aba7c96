package tomlbound

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// Bomb is the reproduction: nested inline tables (or a dotted key) whose decoding costs memory
// with the square of the depth.
func Bomb(size int) string {
	d := (size - 8) / 4
	return "y = " + strings.Repeat("{a=", d) + "1" + strings.Repeat("}", d) + "\n"
}

func TestBombsAreRefusedBeforeParsing(t *testing.T) {
	for name, doc := range map[string]string{
		"inline tables, 200 KB": Bomb(200 << 10),
		"arrays":                "y = " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n",
		"dotted key":            strings.Repeat("a.", 50000) + "b = 1\n",
		"dotted table header":   "[" + strings.Repeat("a.", 50000) + "b]\n",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var v map[string]any
		_, err := Decode([]byte(doc), &v)
		runtime.ReadMemStats(&after)
		var de *DepthError
		if !errors.As(err, &de) || de.Line != 1 {
			t.Errorf("%s: %v, want a DepthError on line 1", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: refusing allocated %d bytes", name, alloc)
		}
	}
}

// What is inside strings and comments does not count, and tune's own shapes pass.
func TestStringsCommentsAndFloatsDoNotCount(t *testing.T) {
	deep := strings.Repeat("{[.", 40)
	for _, doc := range []string{
		`a = "` + deep + `"` + "\n",
		`a = '` + deep + `'` + "\n",
		"a = \"\"\"\n" + deep + "\n\"\"\"\n",
		"a = '''\n" + deep + "\n'''\n",
		"a = \"\"\"x\\\"\"\"" + deep + "\"\"\"\n",
		"# " + deep + "\na = 1\n",
		"a = [1.5, 2.5e3, 1979-05-27T07:32:00.999Z]\n[b.c.d]\ne = {f = [{g = 1}]}\n[[h]]\ni = 1\n",
	} {
		var v map[string]any
		if _, err := Decode([]byte(doc), &v); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
	// at the limit passes, one more is refused
	ok := "y = " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "\n"
	if err := Check([]byte(ok)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	if err := Check([]byte("y = " + strings.Repeat("[", MaxDepth+1))); err == nil {
		t.Errorf("depth %d passes", MaxDepth+1)
	}
	if err := Check([]byte(strings.Repeat("a.", MaxKeyParts-1) + "b = 1\n")); err != nil {
		t.Errorf("%d key parts: %v", MaxKeyParts, err)
	}
	if err := Check([]byte(strings.Repeat("a.", MaxKeyParts) + "b = 1\n")); err == nil {
		t.Errorf("%d key parts pass", MaxKeyParts+1)
	}
}

// FuzzCheck: the scan never panics, and whatever it lets through decodes without panicking.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(Bomb(4 << 10)))
	f.Add([]byte("a = nan\nb = -inf\n"))
	f.Add([]byte("a = \"\"\"\n\\\n\"\"\"\nb = '''x'''''\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v map[string]any
		_, _ = Decode(data, &v)
	})
}

// A value where a table belongs is named in the file's terms: BurntSushi/toml named the Go struct the
// table decodes into, field by field with its tags (the review of the pull-request loop).
func TestATableGivenAValue(t *testing.T) {
	var v struct {
		Evolve struct {
			MaxSteps int `toml:"max_steps"`
		} `toml:"evolve"`
	}
	for in, want := range map[string]string{
		"evolve = 3\n":          `toml: line 1 (last key "evolve"): "evolve" must be a table ([evolve] with its keys on the lines below it), not a number`,
		"evolve = [1]\n":        `not an array`,
		"evolve = \"x\"\n":      `not a string`,
		"evolve = true\n":       `not a boolean`,
		"evolve = 1979-05-27\n": `not a date`,
	} {
		_, err := Decode([]byte(in), &v)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "struct") {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := Decode([]byte("[evolve]\nmax_steps = \"x\"\n"), &v); err == nil || !strings.Contains(err.Error(), `"evolve.max_steps"`) {
		t.Errorf("another mismatch is left as the decoder words it: %v", err)
	}
}
