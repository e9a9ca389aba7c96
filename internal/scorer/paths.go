package scorer

import (
	"strings"
	"unicode/utf8"
)

// pathExtensions are the alternatives of _SINGLE_FILE_PATH, matched case-sensitively (README.MD is not a
// path).
var pathExtensions = []string{"py", "ts", "tsx", "js", "jsx", "md", "yaml", "yml", "json", "toml", "sh", "sql", "go", "rs", "java", "rb"}

// ExtractPaths returns the file paths the reference scorer sees in text, in order and with duplicates:
// re.findall(r"\b[\w./\-]+\.(?:py|ts|…|rb)\b", text) with Python's Unicode \w and \b.
//
// Hand-written because RE2 has neither Unicode \b nor backtracking into the greedy class. The regex reduces
// to this: inside each maximal run of [\w./-] characters, a match starts at the run's first word character
// (the first position where \b holds) and ends after the last ".ext" in the run that is followed by a
// non-word character; the greedy class backtracks to exactly that. A run holds at most one match, since a
// later one would need a later ".ext", which the greedy match would already have taken.
func ExtractPaths(text string) []string {
	var out []string
	// Only runs that hold a '.' can match, so the scan jumps from dot to dot (IndexByte is fast) and
	// widens each into its run.
	for from := 0; ; {
		k := strings.IndexByte(text[from:], '.')
		if k < 0 {
			return out
		}
		dot := from + k
		start := dot
		for start > from {
			c := text[start-1]
			if c < utf8.RuneSelf {
				if !asciiPath[c] {
					break
				}
				start--
				continue
			}
			r, n := utf8.DecodeLastRuneInString(text[from:start])
			if !isWord(r) {
				break
			}
			start -= n
		}
		end := dot + 1
		for end < len(text) {
			n := pathRuneLen(text, end)
			if n == 0 {
				break
			}
			end += n
		}
		if p, ok := pathInRun(text, start, end); ok {
			out = append(out, p)
		}
		from = end
	}
}

// asciiPath marks the ASCII characters of the class [\w./\-].
var asciiPath = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = asciiWord[c] || c == '.' || c == '/' || c == '-'
	}
	return t
}()

// pathRuneLen returns the byte length of the rune at i when it belongs to [\w./\-], else 0.
func pathRuneLen(s string, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		if asciiPath[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if isWord(r) {
		return n
	}
	return 0
}

// pathInRun finds the match inside text[start:end], a maximal run of path characters.
func pathInRun(text string, start, end int) (string, bool) {
	first := start
	for first < end && !wordAt(text, first) {
		first++ // '.', '/' and '-' are one byte
	}
	if first == end {
		return "", false
	}
	// The last '.' after the first character that starts a valid extension ends the match.
	run := text[first:end]
	for k := strings.LastIndexByte(run, '.'); k > 0; k = strings.LastIndexByte(run[:k], '.') {
		dot := first + k
		for _, ext := range pathExtensions {
			e := dot + 1 + len(ext)
			if e <= end && text[dot+1:e] == ext && !wordAt(text, e) {
				return text[first:e], true
			}
		}
	}
	return "", false
}
