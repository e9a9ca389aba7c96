package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/redact"
)

// ErrNoConfigDir is returned by Discover when CLAUDE_CONFIG_DIR is set but none of its entries is a
// Claude config directory (one that holds projects/) or a projects/ directory.
var ErrNoConfigDir = errors.New("CLAUDE_CONFIG_DIR has no valid entry")

// Roots returns the directories to search when no path is given, as ccusage chooses them: the
// comma-separated entries of CLAUDE_CONFIG_DIR (each a config directory holding projects/, or a
// projects/ directory itself), else ~/.config/claude/projects and ~/.claude/projects where they exist.
// When CLAUDE_CONFIG_DIR is set and no entry is valid, it returns an error naming the variable.
func Roots(getenv func(string) string, home string) ([]string, error) {
	if env := strings.TrimSpace(getenv("CLAUDE_CONFIG_DIR")); env != "" {
		var roots []string
		for _, entry := range strings.Split(env, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			if isDir(filepath.Join(entry, "projects")) {
				roots = append(roots, filepath.Join(entry, "projects"))
			} else if filepath.Base(filepath.Clean(entry)) == "projects" && isDir(entry) {
				roots = append(roots, filepath.Clean(entry))
			}
		}
		if len(roots) == 0 {
			return nil, fmt.Errorf("%w: %q (each entry must be a Claude config directory with a projects/ directory, or a projects/ directory)", ErrNoConfigDir, env)
		}
		return dedupeStrings(roots), nil
	}
	var roots []string
	if home != "" {
		for _, dir := range []string{filepath.Join(home, ".config", "claude", "projects"), filepath.Join(home, ".claude", "projects")} {
			if isDir(dir) {
				roots = append(roots, dir)
			}
		}
	}
	return roots, nil
}

// Discover lists the transcript files under paths, sorted by path. A path may be a file (read
// whatever its name), a Claude config directory (its projects/ is searched), a projects/ directory or
// any folder. Folders are searched recursively for *.jsonl; symbolic links met during the walk are
// not followed (ccusage ignores them too), but a path given explicitly is.
func Discover(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		p = filepath.Clean(p)
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("transcripts: %w", err)
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		root := p
		if isDir(filepath.Join(p, "projects")) {
			root = filepath.Join(p, "projects")
		}
		// The walk starts from the root's target: WalkDir does not descend into a root that is a
		// symbolic link, but ccusage does follow a linked projects/ (only links met inside are skipped),
		// and a folder given explicitly is meant to be read. Paths keep the name the root was given by,
		// since project and session come from them.
		walkRoot := root
		if resolved, rerr := filepath.EvalSymlinks(root); rerr == nil {
			walkRoot = resolved
		}
		err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".jsonl") {
				rel, rerr := filepath.Rel(walkRoot, path)
				if rerr != nil {
					return rerr
				}
				files = append(files, filepath.Join(root, rel))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("transcripts: %w", err)
		}
	}
	sort.Strings(files)
	return dedupeStrings(files), nil
}

// TotalSize is the summed size of files; files that cannot be stat'ed count as empty (Scan reports
// them when it opens them).
func TotalSize(files []string) int64 {
	var total int64
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			total += info.Size()
		}
	}
	return total
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// dedupeStrings removes repeats, keeping the first of each (input order preserved).
func dedupeStrings(xs []string) []string {
	seen := make(map[string]bool, len(xs))
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Source is what a transcript file's path says about its lines.
type Source struct {
	Path    string
	Session string // ccusage's session id
	Project string // the directory under projects/, "" when the path has no projects/ component
	Class   Class  // ClassMain, ClassSubagent or ClassCompaction
	AgentID string // from agent-<id>.jsonl, "" for main files
}

// SourceOf derives the session, project, class and agent of a file from its path:
//
//	projects/P/S.jsonl                          → session S, main
//	projects/P/S/subagents/agent-A.jsonl        → session S, subagent A
//	projects/P/S/subagents/agent-acompact-X.jsonl → session S, compaction
//	projects/P/S/x.jsonl                        → session S
//	projects/P/agent-A.jsonl (Claude Code ≤ 2.0) → session agent-A, subagent A
//	any/other/S.jsonl                           → session S
//
// This is ccusage's rule with one difference: for subagents/workflows/W/agent-*.jsonl ccusage reports
// session W; here the session is the directory above subagents/, where the run belongs.
func SourceOf(path string) Source {
	comps := strings.Split(filepath.ToSlash(path), "/")
	name := comps[len(comps)-1]
	stem := strings.TrimSuffix(name, ".jsonl")
	dirs := comps[:len(comps)-1]
	src := Source{Path: path, Session: stem, Class: ClassMain}
	projects := -1
	for i, c := range dirs {
		if c == "projects" {
			projects = i
		}
	}
	if projects >= 0 && projects+1 < len(dirs) {
		src.Project = redact.String(dirs[projects+1]) // a directory name reaches every table too
	}
	subagents := -1
	for i, c := range dirs {
		if c == "subagents" && i > 0 && i > projects+1 {
			subagents = i
		}
	}
	switch {
	case subagents >= 0:
		src.Session = dirs[subagents-1]
		src.Class = ClassSubagent
	case projects >= 0 && len(dirs)-projects >= 3:
		src.Session = dirs[len(dirs)-1]
	}
	if strings.HasPrefix(stem, "agent-") {
		src.AgentID = strings.TrimPrefix(stem, "agent-")
		// Claude Code ≤ 2.0 kept subagent logs beside the session files, with the same name.
		src.Class = ClassSubagent
		if strings.HasPrefix(src.AgentID, "acompact") {
			src.Class = ClassCompaction
		}
	}
	return src
}
