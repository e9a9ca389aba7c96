package cli

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The architecture tests: the layers of docs/architecture.md hold (TestLayering), every package is on
// its map (TestArchitectureMap), and every decisions.md anchor the code cites exists
// (TestDecisionAnchors).

const module = "github.com/ldd-tools/tune/"

// goPackage is one package directory of the module: its path relative to the module root and what
// go/build reads of it.
type goPackage struct {
	rel string
	pkg *build.Package
}

// modulePackages walks the module from internal/cli's directory and returns every Go package outside
// testdata and hidden directories.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	var out []goPackage
	err := filepath.WalkDir("../..", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != "../.." && (name == "testdata" || strings.HasPrefix(name, ".") || name == "bin" || name == "corpus") {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			return nil // no Go package here
		}
		rel, err := filepath.Rel("../..", dir)
		if err != nil {
			return err
		}
		out = append(out, goPackage{rel: filepath.ToSlash(rel), pkg: p})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 30 {
		t.Fatalf("walked only %d packages: the walk is broken", len(out))
	}
	return out
}

// TestLayering keeps the layers of docs/architecture.md: nothing imports internal/cli (nor its internal
// tests; an external test package may run it to compare a front end with it, as front_test does); view
// is below cli, app below view; the domain packages import none of app, view and cli; report never
// reads the store.
func TestLayering(t *testing.T) {
	const (
		cli    = module + "internal/cli"
		view   = module + "internal/view"
		app    = module + "internal/app"
		report = "internal/report"
		store  = module + "internal/store"
	)
	above := map[string][]string{ // package → the layers it must not import
		"internal/view": {cli},
		"internal/app":  {cli, view},
	}
	for _, p := range modulePackages(t) {
		if p.rel == "internal/cli" || p.pkg.Name == "main" {
			continue // main packages wire the command tree in
		}
		if slices.Contains(p.pkg.Imports, cli) || slices.Contains(p.pkg.TestImports, cli) {
			t.Errorf("%s imports internal/cli", p.rel)
		}
		forbidden, ok := above[p.rel]
		if !ok && isDomain(p) {
			forbidden = []string{cli, view, app}
		}
		for _, f := range forbidden {
			if slices.Contains(p.pkg.Imports, f) {
				t.Errorf("%s imports %s: it is below that layer (docs/architecture.md#layers)", p.rel, strings.TrimPrefix(f, module))
			}
		}
		if p.rel == report && slices.Contains(p.pkg.Imports, store) {
			t.Errorf("internal/report imports internal/store: report renders values, app/report_inputs.go reads the store")
		}
	}
}

// isDomain reports whether p is a domain package: an internal package that is not a command layer
// (cli, view, app, the light front end) nor a main package or a tool.
func isDomain(p goPackage) bool {
	switch {
	case !strings.HasPrefix(p.rel, "internal/"), p.pkg.Name == "main", strings.HasPrefix(p.rel, "internal/tools/"):
		return false
	}
	return !slices.Contains([]string{"internal/cli", "internal/view", "internal/app", "internal/front"}, p.rel)
}

// TestArchitectureMap: docs/architecture.md names every package of the module (as `internal/…` or
// `cmd/…` in backquotes), so the map cannot fall behind the code.
func TestArchitectureMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range modulePackages(t) {
		if p.rel == "." {
			continue // the module root holds embed.go only
		}
		if !strings.Contains(string(doc), "`"+p.rel+"`") {
			t.Errorf("docs/architecture.md does not name %s: add it to the packages table with its job", p.rel)
		}
	}
}

// TestDecisionAnchors resolves every decisions.md#… anchor cited in the Go files and docs/architecture.md
// against the headings of docs/decisions.md (GitHub's anchor rules) and its explicit <a id> anchors.
func TestDecisionAnchors(t *testing.T) {
	md, err := os.ReadFile("../../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(md))
	if len(anchors) < 50 || !anchors["trace-logs"] {
		t.Fatalf("%d anchors read from decisions.md, none named trace-logs: the heading reader is broken", len(anchors))
	}
	cite := regexp.MustCompile(`decisions\.md#([A-Za-z0-9_-]+)`)
	checked := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "../.." && (name == "testdata" || strings.HasPrefix(name, ".") || name == "bin" || name == "corpus") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") && filepath.ToSlash(path) != "../../docs/architecture.md" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				checked++
				if !anchors[m[1]] {
					t.Errorf("%s:%d cites decisions.md#%s, which no heading of docs/decisions.md makes", path, i+1, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d citations found: the walk is broken", checked)
	}
}

// headingAnchors are the anchors GitHub makes for the headings of a Markdown document (the text as
// rendered, lower-cased, stripped of punctuation but hyphens and underscores, spaces as hyphens, a
// repeated anchor suffixed -1, -2, …) and its <a id="…"> and <a name="…"> anchors.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	heading := regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	link := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	tag := regexp.MustCompile(`<[^>]+>`)
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		m := heading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		text := tag.ReplaceAllString(link.ReplaceAllString(m[1], "$1"), "")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	for _, m := range regexp.MustCompile(`<a (?:id|name)="([^"]+)"`).FindAllStringSubmatch(md, -1) {
		anchors[m[1]] = true
	}
	return anchors
}
