package cli

import (
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

// TestDiffGolden covers the PR table in text and Markdown: a version written by apply (evidence from
// its proposal file), a proposal against the active version, and a rollback (no evidence).
func TestDiffGolden(t *testing.T) {
	wd, fd := storeTestDirs(t)
	p := storeTestProposal(t)
	path := writeTestProposal(t, wd, p)

	code, out, errOut := storeRun(t, wd, fd, nil, "diff", "active", path)
	if code != 0 {
		t.Fatal(errOut)
	}
	testutil.Golden(t, "store_diff_proposal.txt", []byte(out))

	if code, _, errOut := storeRun(t, wd, fd, nil, "apply"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = storeRun(t, wd, fd, nil, "diff", "v0001", "v0002")
	if code != 0 {
		t.Fatal(errOut)
	}
	testutil.Golden(t, "store_diff.txt", []byte(out))
	code, md, errOut := storeRun(t, wd, fd, nil, "diff", "1", "active", "--format", "markdown")
	if code != 0 {
		t.Fatal(errOut)
	}
	testutil.Golden(t, "store_diff.md", []byte(md))
	code, js, _ := storeRun(t, wd, fd, nil, "diff", "v0001", "v0002", "--format", "json")
	if code != 0 || !strings.Contains(js, `"counts": {`) || !strings.Contains(js, `"confidence": "provisional"`) {
		t.Errorf("json diff:\n%s", js)
	}

	if code, _, errOut := storeRun(t, wd, fd, nil, "rollback"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ = storeRun(t, wd, fd, nil, "diff", "v0002", "v0003", "--format", "markdown")
	if code != 0 {
		t.Fatal(out)
	}
	testutil.Golden(t, "store_diff_rollback.md", []byte(out))
	code, out, _ = storeRun(t, wd, fd, nil, "diff", "v0001", "v0003")
	if code != 0 || !strings.Contains(out, "no differences") {
		t.Errorf("same content: %s", out)
	}
	code, _, errOut = storeRun(t, wd, fd, nil, "diff", "v0001", "v0009")
	if code != 1 || !strings.Contains(errOut, "v0009.toml does not exist") {
		t.Errorf("missing version: %d %s", code, errOut)
	}
	code, _, errOut = storeRun(t, wd, fd, nil, "diff", "v0001", "nonsense.json")
	if code != 1 || !strings.Contains(errOut, `"nonsense.json" is neither a version`) {
		t.Errorf("bad ref: %d %s", code, errOut)
	}
}

// TestVersionZeroIsAUsageError: a reference that reads as a version number but names none is a usage
// error (exit 2) in weights show and diff, as in rollback --to; a version that does not exist yet is
// the store's error (exit 1). Review of the watch (F7).
func TestVersionZeroIsAUsageError(t *testing.T) {
	wd, fd := storeTestDirs(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"weights", "show", "0"}, 2, `"0" is not a weights version: versions start at v0001`},
		{[]string{"weights", "show", "v0000"}, 2, `"v0000" is not a weights version`},
		{[]string{"diff", "v0001", "0"}, 2, `"0" is not a weights version`},
		{[]string{"weights", "show", "9"}, 1, "v0009.toml does not exist (versions: v0001)"},
		{[]string{"diff", "1", "active"}, 0, ""},
	} {
		code, _, errOut := storeRun(t, wd, fd, nil, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
