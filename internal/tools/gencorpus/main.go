// Command gencorpus builds a large transcript corpus for benchmarking `tune audit` against ccusage:
// it copies real Claude Code transcripts N times, rewriting every request, message, session, tool-use
// and line id (and the file names that carry them) so that no copy deduplicates against another. An
// audit of the corpus must therefore report exactly N times the totals of the originals.
//
// Ids are rewritten in place with the same length (a few characters replaced by the copy number),
// so each copy has exactly the bytes of the original: the corpus is N × the input size.
//
//	go run ./internal/tools/gencorpus -copies 60 -out corpus/transcripts testdata/transcripts/spotter/test/fixtures/transcripts
//
// The output is laid out as a Claude config directory (OUT/projects/copy-NN/…), so both
// `tune audit OUT` and `CLAUDE_CONFIG_DIR=OUT ccusage claude daily` read it.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// idPattern matches the ids to rewrite. Every match keeps its length; the characters right after the
// prefix are replaced by the copy number.
var idPattern = regexp.MustCompile(`(msg_|req_|toolu_)[0-9A-Za-z]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func main() {
	copies := flag.Int("copies", 60, "number of copies")
	out := flag.String("out", "corpus/transcripts", "output Claude config `directory` (projects/ is created inside)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gencorpus [-copies N] [-out DIR] TRANSCRIPT_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *copies < 1 || *copies > 9999 {
		flag.Usage()
		os.Exit(2)
	}
	n, size, err := generate(flag.Arg(0), *out, *copies)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
	fmt.Printf("gencorpus: wrote %d files, %.1f MB, to %s\n", n, float64(size)/1e6, *out)
}

type source struct {
	rel       string  // path relative to the input directory
	data      []byte  // content
	spans     [][]int // id matches in data
	nameSpans [][]int
}

func generate(in, out string, copies int) (files int, size int64, err error) {
	var sources []source
	err = filepath.WalkDir(in, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(in, path)
		rel = filepath.ToSlash(rel)
		sources = append(sources, source{
			rel:       rel,
			data:      data,
			spans:     idPattern.FindAllIndex(data, -1),
			nameSpans: idPattern.FindAllStringIndex(rel, -1),
		})
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if len(sources) == 0 {
		return 0, 0, fmt.Errorf("no .jsonl file under %s", in)
	}
	if err := checkUnique(sources); err != nil {
		return 0, 0, err
	}
	for k := 1; k <= copies; k++ {
		project := filepath.Join(out, "projects", fmt.Sprintf("copy-%02d", k))
		for _, src := range sources {
			buf := rewrite(src.data, src.spans, k)
			name := string(rewrite([]byte(src.rel), src.nameSpans, k))
			if len(src.nameSpans) == 0 {
				// Files named without an id (short.jsonl) would share a session across copies.
				name = strings.TrimSuffix(name, ".jsonl") + fmt.Sprintf("-%02d.jsonl", k)
			}
			path := filepath.Join(project, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return files, size, err
			}
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				return files, size, err
			}
			files++
			size += int64(len(buf))
		}
	}
	return files, size, nil
}

// rewrite returns a copy of data with the copy number k stamped into every id span.
func rewrite(data []byte, spans [][]int, k int) []byte {
	buf := append([]byte(nil), data...)
	for _, sp := range spans {
		stamp(buf[sp[0]:sp[1]], k)
	}
	return buf
}

// stamp overwrites the first characters of an id (after its prefix) with k, keeping the alphabet
// of the id: hex for UUIDs, alphanumeric for msg_/req_/toolu_ ids.
func stamp(id []byte, k int) {
	start := 0
	if i := strings.IndexByte(string(id), '_'); i >= 0 {
		start = i + 1
		copy(id[start:], fmt.Sprintf("k%03d", k%1000))
		return
	}
	copy(id[start:], fmt.Sprintf("%04x", k))
}

// checkUnique makes sure stamping keeps distinct ids distinct (two ids that differ only in the
// stamped characters would merge).
func checkUnique(sources []source) error {
	orig := make(map[string]string)
	for _, src := range sources {
		for _, sp := range src.spans {
			id := string(src.data[sp[0]:sp[1]])
			stamped := string(rewrite([]byte(id), [][]int{{0, len(id)}}, 1))
			if prev, ok := orig[stamped]; ok && prev != id {
				return fmt.Errorf("ids %s and %s collide after rewriting", prev, id)
			}
			orig[stamped] = id
		}
	}
	return nil
}
