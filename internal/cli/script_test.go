package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tune": func() { os.Exit(Main()) },
		// tune-killable is tune with a kill point (killpoint_test.go): TUNE_TEST_KILL_AT makes the
		// process SIGKILL itself at a file operation. Only this test binary has it.
		"tune-killable": func() { installKillPoint(); os.Exit(Main()) },
	})
}

// repoRoot is the module root, so scripts can copy the bundled weights, fixtures and test data.
func repoRoot() string { return testutil.RepoRoot() }

// TestScripts runs the end-to-end CLI scripts in testdata/script. Each script gets $ROOT (the
// repository), a fixed clock (TUNE_NOW) and a private weights, fixtures and reports directory.
func TestScripts(t *testing.T) {
	root := repoRoot()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *testutil.Update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", root)
			env.Setenv("TESTDATA", filepath.Join(root, "testdata"))
			env.Setenv("TUNE_NOW", "2026-12-01T03:00:00Z")
			env.Setenv("TUNE_WEIGHTS_DIR", filepath.Join(env.WorkDir, "weights"))
			env.Setenv("TUNE_FIXTURES_DIR", filepath.Join(env.WorkDir, "fixtures"))
			env.Setenv("TUNE_REPORTS_DIR", filepath.Join(env.WorkDir, "reports"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// copydir SRC DST copies a directory tree (the bundled weights or fixtures) into $WORK.
			"copydir": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: copydir SRC DST")
				}
				ts.Check(copyDir(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
			},
			// jsonvar FILE KEY VAR sets $VAR to the top-level string KEY of the JSON object in FILE (a
			// branch name, a commit, a proposal id a later step names).
			"jsonvar": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: jsonvar FILE KEY VAR")
				}
				var obj map[string]any
				ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &obj))
				v, ok := obj[args[1]].(string)
				if !ok {
					ts.Fatalf("%s: %s is not a string: %v", args[0], args[1], obj[args[1]])
				}
				ts.Setenv(args[2], v)
			},
			// txtarfile ARCHIVE NAME DST copies the file NAME of another script (testdata/script/ARCHIVE) to
			// DST, so that two scripts share one copy of a long trace log.
			"txtarfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: txtarfile ARCHIVE NAME DST")
				}
				a, err := txtar.ParseFile(filepath.Join(repoRoot(), "internal", "cli", "testdata", "script", args[0]))
				ts.Check(err)
				for _, f := range a.Files {
					if f.Name == args[1] {
						dst := ts.MkAbs(args[2])
						ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
						ts.Check(os.WriteFile(dst, f.Data, 0o644))
						return
					}
				}
				ts.Fatalf("%s has no file %s", args[0], args[1])
			},
			// appendline FILE TEXT appends TEXT and a newline to FILE, as an agent appends its trace lines;
			// appendline -n FILE TEXT leaves the newline out, as a writer that died mid-line.
			"appendline": func(ts *testscript.TestScript, neg bool, args []string) {
				end := "\n"
				if len(args) > 0 && args[0] == "-n" {
					end, args = "", args[1:]
				}
				if len(args) != 2 {
					ts.Fatalf("usage: appendline [-n] FILE TEXT")
				}
				f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
				ts.Check(err)
				_, err = f.WriteString(args[1] + end)
				ts.Check(err)
				ts.Check(f.Close())
			},
			// replace FILE OLD NEW replaces the one occurrence of OLD in FILE (a hand edit).
			"replace": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: replace FILE OLD NEW")
				}
				data := ts.ReadFile(args[0])
				if strings.Count(data, args[1]) != 1 {
					ts.Fatalf("%s holds %q %d times, want once", args[0], args[1], strings.Count(data, args[1]))
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Replace(data, args[1], args[2], 1)), 0o644))
			},
			// recipe NAME DST writes a recipe's shell script from docs/nightly.md to DST (nightlyRecipe).
			"recipe": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: recipe NAME DST")
				}
				script, err := nightlyRecipe(args[0])
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(script), 0o755))
			},
			// logproposal FILE logs the attempts of a hand-made proposal file as tune propose would, so that
			// tune apply accepts it (apply writes only proposals the log decided).
			"logproposal": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: logproposal FILE")
				}
				p, err := store.ReadProposal(ts.MkAbs(args[0]))
				ts.Check(err)
				now, err := time.Parse(time.RFC3339, ts.Getenv("TUNE_NOW"))
				ts.Check(err)
				ts.Check(logTestDecision(ts.Getenv("TUNE_WEIGHTS_DIR"), p, func() time.Time { return now }))
			},
		},
	})
}

// copyDir copies a directory tree. The repository's weights and fixtures directories are copied as
// their reference content only (testutil.CopyReference): what running tune in the repository root
// leaves there (logs, proposals, later versions, harvested fixtures) never reaches a test.
func copyDir(src, dst string) error {
	switch filepath.Clean(src) {
	case filepath.Join(repoRoot(), "weights"):
		return testutil.CopyReferenceWeights(dst)
	case filepath.Join(repoRoot(), "fixtures"):
		return testutil.CopyFixtures(src, dst)
	}
	return testutil.CopyTree(src, dst, nil)
}
