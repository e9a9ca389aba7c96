package store

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/project"
)

// HeadFile anchors the end of the evolution log: the serial, lineage and line hash of its last entry.
// The hash chain alone cannot notice lines cut off at the end (every remaining line still links to the one
// before it); the anchor can. It is rewritten right after every log append, atomically, so after a crash
// between the two writes it is at most one line behind — which verify accepts, because the extra line is
// chained to the anchored one. See docs/decisions.md#store-integrity-and-hostile-inputs-issue-18.
const HeadFile = "evolution.head"

// headAnchor is the content of HeadFile: "serial <n> lineage <id> sha256 <hex of the line>\n".
type headAnchor struct {
	Serial  int
	Lineage string
	SHA256  string
}

func (h headAnchor) marshal() []byte {
	return fmt.Appendf(nil, "serial %d lineage %s sha256 %s\n", h.Serial, h.Lineage, h.SHA256)
}

func parseHead(data []byte) (headAnchor, error) {
	var h headAnchor
	text, ok := strings.CutSuffix(string(data), "\n")
	f := strings.Fields(text)
	if !ok || strings.Contains(text, "\n") || len(f) != 6 || f[0] != "serial" || f[2] != "lineage" || f[4] != "sha256" {
		return h, fmt.Errorf("want one line \"serial <n> lineage <id> sha256 <hex>\"")
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n <= 0 {
		return h, fmt.Errorf("serial %q is not a positive number", f[1])
	}
	if len(f[5]) != 64 || strings.Trim(f[5], "0123456789abcdef") != "" {
		return h, fmt.Errorf("sha256 %q is not 64 hex digits", f[5])
	}
	h.Serial, h.Lineage, h.SHA256 = n, f[3], f[5]
	return h, nil
}

// anchorOf is the anchor of the log's last line (ok false when the log is empty or its last line does
// not parse).
func (st *state) anchorOf() (headAnchor, bool) {
	n := len(st.lines)
	if n == 0 || !st.lines[n-1].OK {
		return headAnchor{}, false
	}
	e := st.lines[n-1].Entry
	return headAnchor{Serial: e.Serial, Lineage: e.Lineage, SHA256: lineHash(st.lines[n-1].Raw)}, true
}

// verifyHead compares the anchor with the end of the log. Problems name the recovery: a log that ends
// before its anchor lost lines (restore it from version control); an anchor that is missing or behind by
// more than the one line a crash can leave is re-written by `tune repair --resign` once the log is known
// to be right.
func (st *state) verifyHead(pl *problemList) {
	if !st.logExists || len(st.lines) == 0 {
		return
	}
	last, ok := st.anchorOf()
	if !ok {
		return // the unparsable last line is reported by verifyLog
	}
	if !st.headExists {
		if len(st.lines) == 1 {
			return // a crash between the log's first line and its first anchor; the next write anchors it
		}
		pl.add(Problem{Kind: ProblemMissing, File: HeadFile, Message: fmt.Sprintf("not found, but the store has an evolution log: nothing anchors its end, so removed lines would go unnoticed; if %s is known to be complete (compare it with version control), run `tune repair --resign` to anchor it", LogFile)})
		return
	}
	h, err := parseHead(st.headData)
	if err != nil {
		pl.add(Problem{Kind: ProblemHead, File: HeadFile, Message: "malformed: " + err.Error()})
		return
	}
	if h.Lineage != last.Lineage {
		pl.add(Problem{Kind: ProblemHead, File: HeadFile, Message: fmt.Sprintf("anchors lineage %s, but the log has lineage %s (the log or the anchor comes from another store)", h.Lineage, last.Lineage)})
		return
	}
	switch {
	case h.Serial > last.Serial:
		pl.add(Problem{Kind: ProblemHead, File: HeadFile, Message: fmt.Sprintf("anchors serial %d, but %s ends at serial %d: lines were removed from the end of the log (a silent rollback); restore %s from version control (git checkout -- %s)", h.Serial, LogFile, last.Serial, LogFile, project.Shown(filepath.Join(st.dir, LogFile)))})
	case h.Serial == last.Serial && h.SHA256 != last.SHA256:
		pl.add(Problem{Kind: ProblemHead, File: HeadFile, Message: fmt.Sprintf("anchors serial %d with another line hash than %s's last line: the last line was replaced; restore %s from version control", h.Serial, LogFile, LogFile)})
	case h.Serial == last.Serial:
	case h.Serial == last.Serial-1 && len(st.lines) >= 2 && h.SHA256 == lineHash(st.lines[len(st.lines)-2].Raw):
		// a crash between the log append and the anchor write; the next write re-anchors
	default:
		pl.add(Problem{Kind: ProblemHead, File: HeadFile, Message: fmt.Sprintf("anchors serial %d, but %s ends at serial %d and its line %d does not match the anchor: lines were added or changed by hand; restore %s from version control, or run `tune repair --resign` if the log is right", h.Serial, LogFile, last.Serial, h.Serial, LogFile)})
	}
}
