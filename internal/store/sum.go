package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// SumFile is the name of the checksum file, in the spirit of atlas.sum.
const SumFile = "weights.sum"

// sumEntry is one line "<file> h1:<hash>" of the sum file.
type sumEntry struct {
	Name string
	Hash string // base64 of the running sha256 after this file
}

// sumOf computes the atlas-style entries of the given files (in version order): one running SHA-256 is fed
// each file's name and bytes, and each entry is the digest so far, so every entry commits to every file
// before it. Ported from the behaviour of ariga/atlas sql/migrate (HashFile); written here because
// pulling in atlas for forty lines would add a large dependency.
func sumOf(files []versionFile) []sumEntry {
	h := sha256.New()
	out := make([]sumEntry, 0, len(files))
	for _, f := range files {
		h.Write([]byte(f.Name))
		h.Write(f.Data)
		out = append(out, sumEntry{f.Name, base64.StdEncoding.EncodeToString(h.Sum(nil))})
	}
	return out
}

// sumHeader is the h1 over all entries (names and hashes), the first line of the file.
func sumHeader(entries []sumEntry) string {
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.Name))
		h.Write([]byte(e.Hash))
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

func marshalSum(entries []sumEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "h1:%s\n", sumHeader(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%s h1:%s\n", e.Name, e.Hash)
	}
	return b.Bytes()
}

// parseSum reads a sum file. It returns the header hash, the entries and, for a malformed line, an error
// naming the line.
func parseSum(data []byte) (header string, entries []sumEntry, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			h, ok := strings.CutPrefix(text, "h1:")
			if !ok || h == "" {
				return "", nil, fmt.Errorf("line 1: want h1:<checksum>, got %q", text)
			}
			header = h
			continue
		}
		name, hash, ok := strings.Cut(text, " ")
		h, ok2 := strings.CutPrefix(hash, "h1:")
		if !ok || !ok2 || name == "" || h == "" {
			return "", nil, fmt.Errorf("line %d: want \"<file> h1:<checksum>\", got %q", line, text)
		}
		entries = append(entries, sumEntry{name, h})
	}
	if line == 0 {
		return "", nil, fmt.Errorf("line 1: empty file")
	}
	return header, entries, sc.Err()
}
