package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReportsDeterministic renders every report twice (fresh inputs each time) and wants the same bytes,
// Markdown and SVG alike.
func TestReportsDeterministic(t *testing.T) {
	renders := map[string]func() ([]File, error){
		"proposal": func() ([]File, error) { return RenderProposal(sampleProposal()) },
		"history":  func() ([]File, error) { return RenderHistory(sampleHistory()) },
		"audit":    func() ([]File, error) { return RenderAudit(sampleAudit()) },
	}
	for _, name := range []string{"proposal", "history", "audit"} {
		first, err := renders[name]()
		if err != nil {
			t.Fatal(err)
		}
		second, err := renders[name]()
		if err != nil {
			t.Fatal(err)
		}
		if len(first) != len(second) {
			t.Fatalf("%s: %d files, then %d", name, len(first), len(second))
		}
		for i := range first {
			if first[i].Name != second[i].Name || !bytes.Equal(first[i].Data, second[i].Data) {
				t.Errorf("%s: %s differs between two renders", name, first[i].Name)
			}
		}
	}
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	paths, err := WriteProposal(dir, sampleProposal())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "proposal-p-4f1c2a9be07d.md"), filepath.Join(dir, "proposal-p-4f1c2a9be07d-decision.svg"),
		filepath.Join(dir, "proposal-p-4f1c2a9be07d-loss.svg")}
	if len(paths) != 3 || paths[0] != want[0] || paths[1] != want[1] || paths[2] != want[2] {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	info, _ := os.Stat(paths[0])
	// A second write of the same report leaves the file alone (nightly runs twice: nothing changes).
	old := info.ModTime().Add(-time.Hour)
	os.Chtimes(paths[0], old, old)
	if _, err := WriteProposal(dir, sampleProposal()); err != nil {
		t.Fatal(err)
	}
	info, _ = os.Stat(paths[0])
	if !info.ModTime().Equal(old) {
		t.Error("an unchanged report was rewritten")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	for _, bad := range []string{"", "../x.md", "a/b.md", ".hidden"} {
		if _, err := WriteFiles(dir, []File{{Name: bad}}); err == nil {
			t.Errorf("file name %q accepted", bad)
		}
	}
}

func TestFileStem(t *testing.T) {
	for in, want := range map[string]string{"p-0123abc": "p-0123abc", "../../etc": "_.._etc", "": "unnamed", "a b/c": "a_b_c"} {
		if got := fileStem(in); got != want {
			t.Errorf("fileStem(%q) = %q, want %q", in, got, want)
		}
	}
}
