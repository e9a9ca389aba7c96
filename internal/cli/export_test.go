package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/export"
)

const spotter = "../../testdata/transcripts/spotter"

// TestAuditParquetRoundTrip: the Parquet export, read back with the library's reader, has one row per
// request of the audit and the audit's token totals, as one file and partitioned by day.
func TestAuditParquetRoundTrip(t *testing.T) {
	code, out, errOut := traceCLI(t, "audit", "--json", spotter)
	if code != 0 {
		t.Fatalf("audit --json: exit %d %s", code, errOut)
	}
	var doc struct{ Totals audit.Totals }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := doc.Totals
	if want.Requests < 100 {
		t.Fatalf("only %d requests in the sample", want.Requests)
	}
	check := func(name string, rows []export.RequestRow) {
		t.Helper()
		var got audit.Totals
		got.Requests = len(rows)
		cost := 0.0
		for _, r := range rows {
			if r.CostUSD != nil {
				cost += *r.CostUSD
			}
			got.InputTokens += uint64(r.InputTokens)
			got.OutputTokens += uint64(r.OutputTokens)
			got.CacheCreationInputTokens += uint64(r.CacheCreationTokens)
			got.CacheCreation5m += uint64(r.CacheCreation5mTokens)
			got.CacheCreation1h += uint64(r.CacheCreation1hTokens)
			got.CacheReadInputTokens += uint64(r.CacheReadTokens)
			got.ThinkingTokens += uint64(r.ThinkingTokens)
			if r.First.IsZero() || r.Session == "" || r.Model == "" {
				t.Fatalf("%s: a row without first/session/model: %+v", name, r)
			}
		}
		if got.Requests != want.Requests || got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens ||
			got.CacheCreationInputTokens != want.CacheCreationInputTokens || got.CacheCreation5m != want.CacheCreation5m ||
			got.CacheCreation1h != want.CacheCreation1h || got.CacheReadInputTokens != want.CacheReadInputTokens ||
			got.ThinkingTokens != want.ThinkingTokens {
			t.Errorf("%s: read back %+v\naudit totals %+v", name, got, want)
		}
		if want.CostUSD == nil || math.Abs(cost-*want.CostUSD) > 1e-9**want.CostUSD {
			t.Errorf("%s: cost_usd sums to %v, the audit's total is %v", name, cost, want.CostUSD)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "requests.parquet")
	if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--out", file, spotter); code != 0 || !strings.Contains(errOut, "tune: wrote") {
		t.Fatalf("parquet: exit %d %s", code, errOut)
	}
	rows, err := parquet.ReadFile[export.RequestRow](file)
	if err != nil {
		t.Fatal(err)
	}
	check("one file", rows)

	lake := filepath.Join(dir, "lake")
	if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--partition-by", "day", "--out", lake, spotter); code != 0 {
		t.Fatalf("partitioned: exit %d %s", code, errOut)
	}
	parts, _ := filepath.Glob(filepath.Join(lake, "day=*", export.PartitionFile))
	if len(parts) < 2 {
		t.Fatalf("partitions %v", parts)
	}
	var all []export.RequestRow
	for _, p := range parts {
		rows, err := parquet.ReadFile[export.RequestRow](p)
		if err != nil {
			t.Fatal(err)
		}
		day := strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "day=")
		for _, r := range rows {
			if d := r.First.UTC().Format("2006-01-02"); d != day && r.Last.UTC().Format("2006-01-02") != day {
				t.Errorf("%s: a request of %s", p, d)
			}
		}
		all = append(all, rows...)
	}
	check("partitioned", all)
	// The same day again needs --force; with it, the partitions are rewritten to the same totals.
	if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--partition-by", "day", "--out", lake, spotter); code != ExitError || !strings.Contains(errOut, "--force") {
		t.Errorf("existing partitions without --force: exit %d %s", code, errOut)
	}
	if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--partition-by", "day", "--force", "--out", lake, spotter); code != 0 {
		t.Errorf("--force: exit %d %s", code, errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(lake, "day=*", ".*tmp*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// TestAuditPartitionNightly: a nightly job exports one UTC day at a time (--since/--until are UTC days
// with --partition-by day, whatever $TZ says), each run adds exactly its day, the days add up to
// the audit, and a day exported already is refused without touching the lake: no other day's
// directory is left behind, empty or not.
func TestAuditPartitionNightly(t *testing.T) {
	env := map[string]string{"TZ": "Pacific/Kiritimati"} // UTC+14: its days straddle two UTC days
	code, out, errOut := traceCLIEnv(t, env, "audit", "--json", spotter)
	if code != 0 {
		t.Fatalf("audit --json: exit %d %s", code, errOut)
	}
	var doc struct{ Totals audit.Totals }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	dirs := func() []string {
		names, _ := filepath.Glob(filepath.Join(lake, "*"))
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		return names
	}
	days := []string{"2026-02-10", "2026-02-11", "2026-02-12"}
	var requests, output int64
	for i, day := range days {
		code, _, errOut := traceCLIEnv(t, env, "audit", "--format", "parquet", "--partition-by", "day", "--since", day, "--until", day, "--out", lake, spotter)
		if code != 0 {
			t.Fatalf("night of %s: exit %d %s", day, code, errOut)
		}
		if got := dirs(); len(got) != i+1 || got[i] != export.PartitionDir(day) {
			t.Fatalf("night of %s: the lake holds %v", day, got)
		}
		rows, err := parquet.ReadFile[export.RequestRow](filepath.Join(lake, export.PartitionDir(day), export.PartitionFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			requests++
			output += r.OutputTokens
		}
	}
	if requests != int64(doc.Totals.Requests) || output != int64(doc.Totals.OutputTokens) {
		t.Errorf("the nights hold %d requests, %d output tokens; the audit %d, %d", requests, output, doc.Totals.Requests, doc.Totals.OutputTokens)
	}
	// Again without --force: refused, named, and the lake is as it was (no new or emptied day).
	os.RemoveAll(filepath.Join(lake, export.PartitionDir(days[0])))
	os.RemoveAll(filepath.Join(lake, export.PartitionDir(days[2])))
	before, _ := os.ReadFile(filepath.Join(lake, export.PartitionDir(days[1]), export.PartitionFile))
	code, _, errOut = traceCLIEnv(t, env, "audit", "--format", "parquet", "--partition-by", "day", "--out", lake, spotter)
	if code != ExitError || !strings.Contains(errOut, "day 2026-02-11 was exported already") || !strings.Contains(errOut, "--force") {
		t.Errorf("a day exported already: exit %d %s", code, errOut)
	}
	if got := dirs(); len(got) != 1 || got[0] != export.PartitionDir(days[1]) {
		t.Errorf("after the refusal the lake holds %v", got)
	}
	if after, _ := os.ReadFile(filepath.Join(lake, export.PartitionDir(days[1]), export.PartitionFile)); !bytes.Equal(before, after) {
		t.Error("the day exported already was changed")
	}
	if left, _ := filepath.Glob(filepath.Join(lake, "*", ".*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
	// A run that fails after making its --out root (a path without a transcript record) removes it.
	tmp := t.TempDir()
	os.WriteFile(filepath.Join(tmp, "x.jsonl"), []byte("{\"a\": 1}\n"), 0o644)
	if code, _, errOut := traceCLIEnv(t, env, "audit", "--format", "parquet", "--partition-by", "day", "--out", filepath.Join(tmp, "new", "lake"), tmp); code != ExitError {
		t.Errorf("no transcript: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(tmp, "new")); !os.IsNotExist(err) {
		t.Errorf("a failed export left the root it made: %v", err)
	}
	if code, _, _ := traceCLIEnv(t, env, "audit", "--format", "parquet", "--partition-by", "day", "--timezone", "Europe/Paris", "--out", lake, spotter); code != ExitUsage {
		t.Errorf("--timezone other than UTC with --partition-by day: exit %d", code)
	}
	if code, _, errOut := traceCLIEnv(t, env, "audit", "--format", "parquet", "--partition-by", "day", "--timezone", "UTC", "--since", days[2], "--out", lake, spotter); code != 0 {
		t.Errorf("--timezone UTC: exit %d %s", code, errOut)
	}
}

// TestAuditPartitionDays: partitioned by day, a corpus of many days (requests around midnight in
// several time zones) has one partition per day of `tune audit --by day --timezone UTC`, each with that
// day's requests and output tokens. The export writes the days in order, one file at a time.
func TestAuditPartitionDays(t *testing.T) {
	const corpus = "../audit/testdata/costcorpus"
	code, out, errOut := traceCLI(t, "audit", "--by", "day", "--timezone", "UTC", "--json", corpus)
	if code != 0 {
		t.Fatalf("audit --by day: exit %d %s", code, errOut)
	}
	var doc struct {
		Groups []struct {
			Key    string
			Totals audit.Totals
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--partition-by", "day", "--out", lake, corpus); code != 0 {
		t.Fatalf("partitioned: exit %d %s", code, errOut)
	}
	parts, _ := filepath.Glob(filepath.Join(lake, "day=*"))
	if len(parts) != len(doc.Groups) || len(parts) < 5 {
		t.Fatalf("%d partitions for %d days", len(parts), len(doc.Groups))
	}
	for _, g := range doc.Groups {
		rows, err := parquet.ReadFile[export.RequestRow](filepath.Join(lake, export.PartitionDir(g.Key), export.PartitionFile))
		if err != nil {
			t.Fatal(err)
		}
		var output uint64
		for _, r := range rows {
			output += uint64(r.OutputTokens)
		}
		if len(rows) != g.Totals.Requests || output != g.Totals.OutputTokens {
			t.Errorf("day %s: %d requests, %d output tokens; the audit's day has %d, %d", g.Key, len(rows), output, g.Totals.Requests, g.Totals.OutputTokens)
		}
	}
}

// openParquet opens a Parquet file written by the CLI.
func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// jsonKeys are the keys of a JSON object, in order.
func jsonKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestParquetColumnsAreTheJSONFields: the exports' columns are the JSON field names, in the JSON's
// order (tasks: --format jsonl's without iterations, with their counts iteration_count and k, and the
// optional omitted group; requests: --format jsonl's exactly); timestamps have the timestamp logical
// type (UTC), token counts are 64-bit integers, and every column chunk is zstd-compressed.
func TestParquetColumnsAreTheJSONFields(t *testing.T) {
	dir := t.TempDir()
	// A real log, and a task that records an [explore] draw (its three fields are in the JSON only
	// when set): the last task's JSON has every field.
	data, err := os.ReadFile("../../testdata/ldd/traces/e2e-demos__v013x__merged-view.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "explore.log")
	data = append(data, "\n2026-12-01T10:00:00.000000Z  meta  L2/deliberate  dispatch=explore  signals=cross-layer:+2  task=\"x\"  loops=inner  explore=raised  explore_level=L1  explore_share=0.2\n"...)
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, jsonl, _ := traceCLI(t, "trace", "--last", "0", "--format", "jsonl", log)
	lines := strings.Split(strings.TrimSpace(jsonl), "\n")
	var want []string
	for _, k := range jsonKeys(t, lines[len(lines)-1]) {
		if k != "iterations" {
			want = append(want, k)
		}
	}
	want = append(want, "iteration_count", "k", "omitted")
	tasks := filepath.Join(dir, "tasks.parquet")
	if code, _, errOut := traceCLI(t, "trace", "--last", "0", "--format", "parquet", "--out", tasks, log); code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	_, reqJSONL, _ := traceCLI(t, "audit", "--format", "jsonl", spotter)
	requests := filepath.Join(dir, "requests.parquet")
	if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--out", requests, spotter); code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, c := range []struct {
		path       string
		want       []string
		timestamps []string
	}{
		{tasks, want, []string{"meta_timestamp"}},
		{requests, jsonKeys(t, strings.SplitN(reqJSONL, "\n", 2)[0]), []string{"first", "last"}},
	} {
		pf := openParquet(t, c.path)
		var got []string
		for _, f := range pf.Schema().Fields() {
			got = append(got, f.Name())
			lt := f.Type().LogicalType()
			var ts *format.TimestampType
			if lt != nil {
				ts, _ = lt.Value.(*format.TimestampType)
			}
			isTime := ts != nil
			if isTime != slices.Contains(c.timestamps, f.Name()) || (isTime && !ts.IsAdjustedToUTC) {
				t.Errorf("%s: column %s: logical type %v", filepath.Base(c.path), f.Name(), lt)
			}
			if strings.HasSuffix(f.Name(), "_tokens") && f.Type().Kind() != parquet.Int64 {
				t.Errorf("%s: column %s is %v, want INT64", filepath.Base(c.path), f.Name(), f.Type().Kind())
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: columns\n%v\nthe JSON's fields\n%v", filepath.Base(c.path), got, c.want)
		}
		for _, rg := range pf.Metadata().RowGroups {
			for _, col := range rg.Columns {
				if col.MetaData.Codec != format.Zstd {
					t.Errorf("%s: column %v is %v, want zstd", filepath.Base(c.path), col.MetaData.PathInSchema, col.MetaData.Codec)
				}
			}
		}
	}
}

// TestTraceParquetRoundTrip: one row per task of `tune trace --json`, same lines, levels and losses.
func TestTraceParquetRoundTrip(t *testing.T) {
	logs := []string{"../../testdata/ldd/traces/e2e-demos__v013x__merged-view.log", "testdata/trace_messy.log",
		"../../testdata/ldd/traces/e2e-v031-runs__20260420T195255Z__2-refine.log"}
	code, out, errOut := traceCLI(t, append([]string{"trace", "--json", "--last", "0"}, logs...)...)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var doc struct {
		Tasks []struct {
			Source    string   `json:"source"`
			Line      int64    `json:"line"`
			Level     string   `json:"level"`
			LossFinal *float64 `json:"loss_final"`
			Signals   []struct {
				Name   string  `json:"name"`
				Weight float64 `json:"weight"`
			} `json:"signals"`
			Iterations []struct {
				Kind     string `json:"kind"`
				Baseline bool   `json:"baseline"`
			} `json:"iterations"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tasks.parquet")
	if code, _, errOut := traceCLI(t, append([]string{"trace", "--format", "parquet", "--out", file, "--last", "0"}, logs...)...); code != 0 {
		t.Fatalf("parquet: exit %d %s", code, errOut)
	}
	rows, err := parquet.ReadFile[export.TaskRow](file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(doc.Tasks) || len(rows) < 5 {
		t.Fatalf("%d rows for %d tasks", len(rows), len(doc.Tasks))
	}
	var sumK int64
	for i, r := range rows {
		w := doc.Tasks[i]
		sumK += r.K
		if r.Source != w.Source || r.Line != w.Line || r.Level != w.Level || (r.LossFinal == nil) != (w.LossFinal == nil) ||
			(r.LossFinal != nil && *r.LossFinal != *w.LossFinal) || len(r.Signals) != len(w.Signals) {
			t.Errorf("row %d: %+v, task %+v", i, r, w)
		}
		var all, k int64
		for _, e := range w.Iterations {
			if e.Kind == "iter" {
				all++
				if !e.Baseline {
					k++
				}
			}
		}
		if r.IterationCount != all || r.K != k {
			t.Errorf("row %d: iteration_count %d, k %d; the JSON's iterations give %d, %d", i, r.IterationCount, r.K, all, k)
		}
		for j := range r.Signals {
			if r.Signals[j].Name != w.Signals[j].Name || r.Signals[j].Weight != w.Signals[j].Weight {
				t.Errorf("row %d signal %d: %+v vs %+v", i, j, r.Signals[j], w.Signals[j])
			}
		}
	}
	if sumK == 0 {
		t.Error("no task has an iteration: the logs do not test k")
	}
	if rows[0].MetaTimestamp == nil || rows[0].MetaTimestamp.Year() != 2026 {
		t.Errorf("meta_timestamp %v", rows[0].MetaTimestamp)
	}
}

// TestExportOutErrors: an export never leaves a partial file under its name, refuses to replace a
// file without --force, and names the problem.
func TestExportOutErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "tasks.parquet")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	log := "testdata/trace_messy.log"
	if code, _, errOut := traceCLI(t, "trace", "--format", "parquet", "--out", existing, log); code != ExitError || !strings.Contains(errOut, "exists (give --force") {
		t.Errorf("existing file: exit %d %s", code, errOut)
	}
	if data, _ := os.ReadFile(existing); string(data) != "keep me" {
		t.Errorf("the existing file was changed")
	}
	missing := filepath.Join(dir, "missing", "x.parquet")
	if code, _, errOut := traceCLI(t, "trace", "--format", "parquet", "--out", missing, log); code != ExitError || !strings.Contains(errOut, "--out: write "+missing+": no directory") {
		t.Errorf("missing directory: exit %d %s", code, errOut)
	}
	// Unwritable even for root: the directory is a file. The error names the file asked for (not a
	// temp name), and nothing is left.
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, []byte("x"), 0o644)
	for _, args := range [][]string{
		{"trace", "--format", "parquet", "--out", filepath.Join(notDir, "x.parquet"), log},
		{"audit", "--format", "parquet", "--out", filepath.Join(notDir, "x.parquet"), spotter},
		{"audit", "--format", "parquet", "--partition-by", "day", "--out", filepath.Join(notDir, "lake"), spotter},
	} {
		code, _, errOut := traceCLI(t, args...)
		if code != ExitError || !strings.Contains(errOut, notDir) || !strings.Contains(errOut, "not a directory") || strings.Contains(errOut, ".tmp-") {
			t.Errorf("%v: exit %d %s", args[:4], code, errOut)
		}
	}
	if os.Getuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if code, _, errOut := traceCLI(t, "trace", "--format", "parquet", "--out", filepath.Join(ro, "x.parquet"), log); code != ExitError || !strings.Contains(errOut, "permission denied") {
			t.Errorf("unwritable directory: exit %d %s", code, errOut)
		}
	}
	if code, _, errOut := traceCLI(t, "trace", "--format", "parquet", "--force", "--out", existing, log); code != 0 {
		t.Errorf("--force: exit %d %s", code, errOut)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, ".*")); len(names) > 0 {
		t.Errorf("temp files left: %v", names)
	}
	for _, args := range [][]string{
		{"trace", "--format", "parquet", log},
		{"trace", "--out", "x.parquet", log},
		{"trace", "--force", log},
		{"audit", "--format", "parquet", spotter},
		{"audit", "--partition-by", "day", spotter},
		{"audit", "--format", "parquet", "--partition-by", "week", "--out", dir, spotter},
	} {
		if code, _, errOut := traceCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// TestExportHelpTeaches: trace's and audit's --help say how the exports are written and what happens
// to an existing or a failed --out, and audit's how a nightly job adds a day.
func TestExportHelpTeaches(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"trace", []string{"--format parquet --out FILE", "row groups of at most 65,536", "whole or not at all",
			"full disk", "needs --force", "--format jsonl streams", "last 1,000 rows"}},
		{"audit", []string{"--format parquet --out FILE", "row groups of at most 65,536", "whole or not at all",
			"full disk", "needs --force", "--partition-by day", "day=YYYY-MM-DD/requests.parquet", "UTC days",
			`--since "$(date -u -d yesterday +%F)"`, "exported already is refused", "no empty day directory"}},
	} {
		code, out, errOut := traceCLI(t, c.cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d %s", c.cmd, code, errOut)
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, w := range c.want {
			if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("%s --help does not say %q", c.cmd, w)
			}
		}
	}
}

// lakeState lists a partitioned export: every entry under the root with its content's hash, temp
// files (hidden, ".tmp-" in the name) apart.
func lakeState(t *testing.T, root string) (days map[string]string, temps []string) {
	t.Helper()
	days = map[string]string{}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.Contains(d.Name(), ".tmp-"):
			temps = append(temps, rel)
		case d.IsDir():
			days[rel] = "(directory)"
		default:
			data, _ := os.ReadFile(path)
			days[rel] = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		return nil
	})
	return days, temps
}

// A partitioned export killed (SIGKILL, in a real process) at each of its file operations leaves only
// whole days: every day=… directory holds its complete file, byte for byte the one an uninterrupted
// run writes, and nothing else; unfinished days are hidden temp files in the root, outside every
// partition. The one exception is the moment between making a new day's directory and renaming its
// file in (killed at "rename"): that day's directory is empty. A re-run with --force then writes the
// whole export.
func TestKilledPartitionedExportLeavesWholeDays(t *testing.T) {
	corpus, _ := filepath.Abs("../audit/testdata/costcorpus")
	args := []string{"audit", "--format", "parquet", "--partition-by", "day", "--out", "lake", corpus}
	ref := t.TempDir()
	points := filepath.Join(t.TempDir(), "points")
	if killed, out := runKillable(t, ref, killEnv(ref, "TUNE_TEST_KILL_LOG="+points), args...); killed {
		t.Fatalf("killed without a kill point:\n%s", out)
	}
	want, temps := lakeState(t, filepath.Join(ref, "lake"))
	if len(temps) > 0 || len(want) < 10 {
		t.Fatalf("the uninterrupted export: %v, temps %v", want, temps)
	}
	data, _ := os.ReadFile(points)
	ops := strings.Split(strings.TrimSpace(string(data)), "\n")
	for _, k := range killSample(ops, os.Getenv("TUNE_TEST_KILL_ALL") != "") {
		t.Run(fmt.Sprintf("%02d-%s", k+1, strings.ReplaceAll(ops[k], " ", "-")), func(t *testing.T) {
			dir := t.TempDir()
			if killed, out := runKillable(t, dir, killEnv(dir, fmt.Sprintf("TUNE_TEST_KILL_AT=%d", k+1)), args...); !killed {
				t.Fatalf("not killed at %s:\n%s", ops[k], out)
			}
			got, temps := lakeState(t, filepath.Join(dir, "lake"))
			empty := 0
			for name, sum := range got {
				if sum == "(directory)" {
					file := filepath.Join(name, export.PartitionFile)
					if _, ok := got[file]; !ok && strings.HasPrefix(ops[k], "rename ") {
						empty++ // made, its file not yet renamed in: the one moment a day has no file
						continue
					}
					if got[file] != want[file] {
						t.Errorf("killed at %s: %s is there without its whole file", ops[k], name)
					}
				} else if sum != want[name] {
					t.Errorf("killed at %s: %s is not the file of an uninterrupted run", ops[k], name)
				}
			}
			if empty > 1 {
				t.Errorf("killed at %s: %d day directories without their file", ops[k], empty)
			}
			for _, tmp := range temps {
				if strings.ContainsRune(tmp, filepath.Separator) || strings.HasSuffix(tmp, ".parquet") {
					t.Errorf("killed at %s: a temp file %s inside a partition, or named *.parquet", ops[k], tmp)
				}
			}
			if code, _, errOut := traceCLI(t, "audit", "--format", "parquet", "--partition-by", "day", "--force", "--out", filepath.Join(dir, "lake"), corpus); code != 0 {
				t.Fatalf("re-run: exit %d %s", code, errOut)
			}
			got, _ = lakeState(t, filepath.Join(dir, "lake"))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after the re-run: %v\nwant %v", got, want)
			}
		})
	}
}

// An export whose writes fail part way (a file size limit, ulimit -f, makes write return EFBIG as a
// full disk returns ENOSPC) in a real process: exit 1, an error naming the file asked for, and
// nothing under that name — an existing file given with --force keeps its old content, and a
// partitioned export adds no day and leaves no directory.
func TestExportWriteFailsPartWay(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for ulimit")
	}
	corpus, _ := filepath.Abs(spotter)
	log, _ := filepath.Abs("../../testdata/ldd/traces/e2e-demos__v013x__merged-view.log")
	for _, c := range []struct {
		name, out string
		args      []string
	}{
		{"trace", "tasks.parquet", []string{"trace", "--last", "0", "--format", "parquet", "--force", "--out", "tasks.parquet", log}},
		{"audit", "requests.parquet", []string{"audit", "--format", "parquet", "--force", "--out", "requests.parquet", corpus}},
		{"partitioned", "lake", []string{"audit", "--format", "parquet", "--partition-by", "day", "--out", "lake", corpus}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name != "partitioned" {
				os.WriteFile(filepath.Join(dir, c.out), []byte("the old export"), 0o644)
			}
			cmd := exec.Command("sh", "-c", `ulimit -f 4 && exec tune-killable "$@"`, "sh")
			cmd.Args = append(cmd.Args, c.args...)
			cmd.Dir, cmd.Env = dir, killEnv(dir)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "file too large") ||
				!strings.Contains(string(out), c.out) || strings.Contains(string(out), ".tmp-") {
				t.Fatalf("%v: %v\n%s", c.args, err, out)
			}
			names, _ := filepath.Glob(filepath.Join(dir, "*"))
			hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
			if c.name == "partitioned" {
				if len(names)+len(hidden) != 0 {
					t.Errorf("left behind: %v %v", names, hidden)
				}
				return
			}
			if data, _ := os.ReadFile(filepath.Join(dir, c.out)); string(data) != "the old export" || len(names) != 1 || len(hidden) != 0 {
				t.Errorf("%s holds %q; the directory %v %v", c.out, data, names, hidden)
			}
		})
	}
}
