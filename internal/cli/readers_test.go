package cli

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An edited version whose checksum was patched into the log breaks the chain; every command that reads
// weights refuses it with the verify message (exit 1) instead of using it (docs/decisions.md, issue 18).
func TestReadersRefuseAnEditedVersionWithAPatchedLogHash(t *testing.T) {
	wd, fd := storeTestDirs(t)
	writeTestProposal(t, wd, storeTestProposal(t))
	for _, args := range [][]string{{"apply"}, {"rollback"}} {
		if code, _, errOut := storeRun(t, wd, fd, nil, args...); code != 0 {
			t.Fatal(args, errOut)
		}
	}
	// edit v0002 (not the last line of the log) and patch its hash into the log
	path := filepath.Join(wd, "v0002.toml")
	data, _ := os.ReadFile(path)
	edited := strings.Replace(string(data), "ambiguous = 3", "ambiguous = 9", 1)
	if edited == string(data) {
		t.Fatal("edit changed nothing")
	}
	os.WriteFile(path, []byte(edited), 0o644)
	logPath := filepath.Join(wd, "evolution.jsonl")
	logData, _ := os.ReadFile(logPath)
	lines := strings.Split(string(logData), "\n")
	patched := false
	for i, l := range lines {
		var e struct {
			Result int    `json:"result"`
			SHA    string `json:"result_sha256"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Result == 2 && e.SHA != "" {
			lines[i] = strings.Replace(l, e.SHA, fmt.Sprintf("%x", sha256.Sum256([]byte(edited))), 1)
			patched = true
		}
	}
	if !patched {
		t.Fatal("no apply line for v0002")
	}
	os.WriteFile(logPath, []byte(strings.Join(lines, "\n")), 0o644)

	for _, args := range [][]string{
		{"score", "refactor the auth flow"},
		{"weights", "show"},
		{"weights", "show", "v0002"},
		{"diff", "v0001", "v0002"},
		{"replay"},
		{"detect", filepath.Join(repoRoot(), "testdata/ldd/traces/e2e-demos__v013x__merged-view.log")},
		{"history"},
	} {
		code, out, errOut := storeRun(t, wd, fd, nil, args...)
		if code != 1 || !strings.Contains(errOut, "does not verify: evolution.jsonl") || !strings.Contains(errOut, "chain") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
	}
}
