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
	for i := 0; i < len(text); {
		n := pathRuneLen(text, i)
		if n == 0 {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			continue
		}
		start, end, dots := i, i+n, text[i] == '.'
		for end < len(text) {
			n := pathRuneLen(text, end)
			if n == 0 {
				break
			}
			dots = dots || text[end] == '.'
			end += n
		}
		if !dots {
			i = end
			continue // no extension in this run
		}
		if p, ok := pathInRun(text, start, end); ok {
			out = append(out, p)
		}
		i = end
	}
	return out
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
