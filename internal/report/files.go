package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File is one rendered report file: a bare name (no directory) and its bytes.
type File struct {
	Name string
	Data []byte
}

// WriteFiles writes files under dir (created when missing) and returns their paths in order. Each file is
// written to a temporary name and renamed, so a reader never sees half a report; a file whose bytes are
// already there is left alone, so a second nightly run does not even touch the modification time.
func WriteFiles(dir string, files []File) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report directory: %w", err)
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") {
			return paths, fmt.Errorf("report file name %q: want a plain file name", f.Name)
		}
		path := filepath.Join(dir, f.Name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.Data) {
			paths = append(paths, path)
			continue
		}
		tmp, err := os.CreateTemp(dir, "."+f.Name+".tmp*")
		if err != nil {
			return paths, err
		}
		_, werr := tmp.Write(f.Data)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), path)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return paths, fmt.Errorf("%s: %w", path, werr)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// inputHash is the first 12 hex digits of the sha256 of v's JSON encoding. encoding/json writes struct
// fields in declaration order and map keys sorted, so equal inputs give equal names.
func inputHash(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("report input does not encode: %v", err)) // plain data always encodes
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:12]
}

// fileStem keeps the characters of an id that are safe in a file name on every system.
func fileStem(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ".")
	if out == "" {
		return "unnamed"
	}
	return out
}

// renderSet collects a report's Markdown and charts; charts are rendered to SVG as they are added and
// linked from the Markdown by file name.
type renderSet struct {
	base   string
	md     bytes.Buffer
	charts []File
}

// chart renders c as <base>-<suffix>.svg and writes the image link into the Markdown.
func (r *renderSet) chart(suffix, alt string, c Chart) error {
	var b bytes.Buffer
	if err := c.Render(&b, SVG); err != nil {
		return fmt.Errorf("%s chart: %w", suffix, err)
	}
	name := r.base + "-" + suffix + ".svg"
	r.charts = append(r.charts, File{Name: name, Data: b.Bytes()})
	fmt.Fprintf(&r.md, "![%s](%s)\n\n", alt, name)
	return nil
}

func (r *renderSet) files() []File {
	return append([]File{{Name: r.base + ".md", Data: r.md.Bytes()}}, r.charts...)
}
