package view

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Progress draws the progress bar of a transcript scan on a terminal (app.ScanHooks.Progress) and
// erases it once the scan has ended.
type Progress struct {
	W     io.Writer
	start time.Time
	drawn bool
}

// Update draws the bar at done of total bytes.
func (p *Progress) Update(done, total int64) {
	if !p.drawn {
		p.drawn, p.start = true, time.Now()
	}
	drawProgress(p.W, done, total, time.Since(p.start))
}

// Clear erases the bar, if one is drawn.
func (p *Progress) Clear() {
	if p.drawn {
		fmt.Fprint(p.W, textfmt.EraseLine) // the one escape sequence tune writes (see textfmt.TerminalWriter)
		p.drawn = false
	}
}

func drawProgress(w io.Writer, done, total int64, elapsed time.Duration) {
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	n := int(frac * width)
	fmt.Fprintf(w, "\rreading transcripts [%s%s] %3.0f%% %d/%d MB %.1fs", strings.Repeat("=", n), strings.Repeat(" ", width-n),
		100*frac, done/1e6, total/1e6, elapsed.Seconds())
}

// ScanWarnings prints what a transcript scan left out: the unreadable files, then one summary line
// of the skipped lines and the first few file:line samples.
func ScanWarnings(w io.Writer, res *transcript.Result) {
	for _, u := range res.Unreadable {
		Warn(w, "", fmt.Sprintf("left out %s: cannot read it (%s); --strict makes this an error", u.File, u.Err))
	}
	total := 0
	for _, n := range res.Skipped {
		total += n
	}
	if total == 0 {
		return
	}
	var parts []string
	for _, r := range []string{transcript.ReasonNotObject, transcript.ReasonTruncated, transcript.ReasonMalformed,
		transcript.ReasonInvalidUsage, transcript.ReasonNoTimestamp, transcript.ReasonInvalidField, transcript.ReasonNullField,
		transcript.ReasonTooLong} {
		if n := res.Skipped[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, r))
		}
	}
	Warn(w, "", fmt.Sprintf("skipped %d of %d lines (%s)", total, res.Lines.Lines, strings.Join(parts, ", ")))
	const samples = 10
	for i, warn := range res.Warnings {
		if i == samples {
			Warn(w, "", fmt.Sprintf("… (%d more in --json \"warnings\")", len(res.Warnings)-samples))
			break
		}
		Warn(w, warn.File+":"+strconv.Itoa(warn.Line), warn.Reason)
	}
}

// NoTranscripts says where no transcript was found (the audit goes on with none).
func NoTranscripts(w io.Writer, where string) {
	fmt.Fprintf(w, "tune: no transcript (*.jsonl) found in %s\n", where)
}

// Unpriced names the models without a price, whose requests' cost is unknown.
func Unpriced(w io.Writer, models map[string]int) {
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		Warn(w, "", fmt.Sprintf("no price for model %q (%s): their cost is unknown and left out of the totals; give it with --pricing FILE",
			m, textfmt.Plural(models[m], "request")))
	}
}

// EffortWarnings prints tune effort's warnings as FILE:LINE: reason; census files are named under the
// repository as given (repo "" for the transcripts' warnings).
func EffortWarnings(w io.Writer, repo string, warns []effort.Warning) {
	for _, x := range warns {
		Warn(w, "", effort.WarningText(repo, x))
	}
}

// ScanHooks follow the scans of the audit use cases on w: a progress bar when w is a terminal, then
// each scan's skipped lines. Clear the bar when the use case returns.
func ScanHooks(w io.Writer, terminal bool) (app.ScanHooks, *Progress) {
	p := &Progress{W: w}
	h := app.ScanHooks{Scanned: func(res *transcript.Result) { p.Clear(); ScanWarnings(w, res) }}
	if terminal {
		h.Progress = p.Update
	}
	return h, p
}

// AuditNotes prints on w what an audit found beside its output: where no transcript was found, the
// models without a price, the census of the report's effort section, and the report files written;
// notes (which repository the pins were read from; repo is --repo) go to notes, io.Discard under
// --quiet.
func AuditNotes(w, notes io.Writer, res *app.AuditResult, repo string) {
	if res.NoTranscripts {
		NoTranscripts(w, app.DescribeRoots(res.Roots))
	}
	Unpriced(w, res.Unpriced)
	if res.EmptyRange != "" {
		Notes(notes, []string{fmt.Sprintf("no request %s: the transcripts read hold none of those days", res.EmptyRange)})
	}
	EffortWarnings(w, res.CensusRepo, res.CensusWarnings)
	if res.CensusRepo != "" {
		Notes(notes, []string{app.PinsNote(res.CensusRepo, repo)})
	}
	for _, p := range res.ReportFiles {
		fmt.Fprintf(w, "tune: report: %s\n", p)
	}
}

// EffortNotes prints on w what tune effort found beside its output, in the order it happened: the
// census's warnings, the project root when the pins were read there (repo is --repo; a note, on
// notes), where no transcript was found, and the transcripts' warnings.
func EffortNotes(w, notes io.Writer, res *app.EffortResult, repo string) {
	EffortWarnings(w, res.Repo, res.CensusWarnings)
	if res.Repo != repo {
		Notes(notes, []string{app.PinsNote(res.Repo, repo)})
	}
	if res.NoTranscripts {
		NoTranscripts(w, app.DescribeRoots(res.Roots))
	}
	EffortWarnings(w, "", res.ObservedWarnings)
}

// Wrote says on w that an export wrote n rows (of noun: "request", "task") to path.
func Wrote(w io.Writer, n int64, noun, path string) {
	fmt.Fprintf(w, "tune: wrote %s to %s\n", textfmt.Plural(int(n), noun), path)
}
