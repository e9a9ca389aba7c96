package helpwrap

import (
	"strings"
	"testing"
)

func TestProse(t *testing.T) {
	in := "A paragraph broken for a wide screen, which is rejoined and wrapped again to the width.\n" +
		"Its second line.\n" +
		"\n" +
		"  Term one   its text, long enough to need a second line at this width, aligned\n" +
		"             under the text.\n" +
		"- a list item that is long enough to wrap onto a second line here\n" +
		"  continued:\n" +
		"  tune audit --format parquet \\\n" +
		"    --since x"
	want := "A paragraph broken for a wide screen, which is\n" +
		"rejoined and wrapped again to the width. Its\n" +
		"second line.\n" +
		"\n" +
		"  Term one   its text, long enough to need a\n" +
		"             second line at this width, aligned\n" +
		"             under the text.\n" +
		"- a list item that is long enough to wrap onto a\n" +
		"  second line here continued:\n" +
		"  tune audit --format parquet \\\n" +
		"    --since x"
	if got := Prose(in, 50); got != want {
		t.Errorf("Prose:\n%s\nwant:\n%s", got, want)
	}
}

// A fenced code block is code: its lines are neither joined nor wrapped, and the paragraph before it
// does not run into its fence.
func TestProseKeepsFencedCode(t *testing.T) {
	in := "Write the answer into tune.toml, in a reviewed commit, with the knob and its value\n" +
		"```toml\n" +
		"[evolve.drift_acknowledged]\n" +
		"layer-crossings = 4      # a comment long enough to pass the width of this test by far\n" +
		"```\n" +
		"From then on a night that stops at the drift bound on that knob does not page."
	want := "Write the answer into tune.toml, in a reviewed\n" +
		"commit, with the knob and its value\n" +
		"```toml\n" +
		"[evolve.drift_acknowledged]\n" +
		"layer-crossings = 4      # a comment long enough to pass the width of this test by far\n" +
		"```\n" +
		"From then on a night that stops at the drift bound\n" +
		"on that knob does not page."
	if got := Prose(in, 50); got != want {
		t.Errorf("Prose:\n%s\nwant:\n%s", got, want)
	}
}

func TestExample(t *testing.T) {
	in := `  tune diff active weights/proposals/p-98cce9bd98d5.json --format markdown > pr-body.md
  tune trace x.log --json | jq '.tasks[] | select(.level == "L1" and .loss > 0.5)'`
	want := `  tune diff active weights/proposals/p-98cce9bd98d5.json \
      --format markdown > pr-body.md
  tune trace x.log --json | jq \
      '.tasks[] | select(.level == "L1" and .loss > 0.5)'`
	if got := Example(in, 60); got != want {
		t.Errorf("Example:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(Example(in, 60), "\n") {
		if len(line) > 60 {
			t.Errorf("line of %d: %s", len(line), line)
		}
	}
}
