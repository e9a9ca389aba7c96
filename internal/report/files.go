package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/textfmt"
)

// File is one rendered report file: a bare name (no directory) and its bytes.
type File struct {
	Name string
	Data []byte
}

// WriteFiles writes files under dir (created when missing) and returns their paths in order. Each file is
// written atomically (internal/atomicfile: fsynced, 0644), so a reader never sees half a report; a file whose bytes are
// already there is left alone, so a second nightly run does not even touch the modification time.
func WriteFiles(dir string, files []File) ([]string, error) {
	if err := regular.RealDirs(dir); err != nil {
		return nil, err // a link would take the reports outside the project
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report directory: %w", err)
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") {
			return paths, fmt.Errorf("report file name %q: want a plain file name", f.Name)
		}
		path := filepath.Join(dir, f.Name)
		// a title or a name in a report may carry an escape sequence: never into the file (cat shows it)
		f.Data = []byte(textfmt.Markdown(string(f.Data)))
		// read back only a regular file within a report's size (a FIFO or a link there is replaced by the write)
		if old, err := regular.ReadLimitedNoFollow(path, regular.ReportFile); err == nil && bytes.Equal(old, f.Data) {
			paths = append(paths, path)
			continue
		}
		if err := atomicfile.Write(path, f.Data, atomicfile.Public); err != nil {
			return paths, fmt.Errorf("%s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// inputHash is the first 12 hex digits of the sha256 of a canonical encoding of v: struct fields in
// declaration order, map keys sorted, floats in shortest form (NaN included — which is why this is not
// encoding/json, which refuses NaN), times in RFC 3339. Equal inputs give equal names.
func inputHash(v any) string {
	h := sha256.New()
	canonical(h, reflect.ValueOf(v))
	return hex.EncodeToString(h.Sum(nil))[:12]
}

var timeType = reflect.TypeOf(time.Time{})

func canonical(w io.Writer, v reflect.Value) {
	if v.Type() == timeType {
		fmt.Fprintf(w, "t%q", v.Interface().(time.Time).UTC().Format(time.RFC3339Nano))
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			io.WriteString(w, "nil")
			return
		}
		canonical(w, v.Elem())
	case reflect.Struct:
		io.WriteString(w, "{")
		for i := 0; i < v.NumField(); i++ {
			fmt.Fprintf(w, "%s:", v.Type().Field(i).Name)
			canonical(w, v.Field(i))
			io.WriteString(w, ",")
		}
		io.WriteString(w, "}")
	case reflect.Slice, reflect.Array:
		fmt.Fprintf(w, "[%d:", v.Len())
		for i := 0; i < v.Len(); i++ {
			canonical(w, v.Index(i))
			io.WriteString(w, ",")
		}
		io.WriteString(w, "]")
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		fmt.Fprintf(w, "map[%d:", len(keys))
		for _, k := range keys {
			canonical(w, k)
			io.WriteString(w, "=")
			canonical(w, v.MapIndex(k))
			io.WriteString(w, ",")
		}
		io.WriteString(w, "]")
	case reflect.String:
		fmt.Fprintf(w, "%q", v.String())
	case reflect.Float32, reflect.Float64:
		io.WriteString(w, strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		io.WriteString(w, strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		io.WriteString(w, strconv.FormatUint(v.Uint(), 10))
	case reflect.Bool:
		io.WriteString(w, strconv.FormatBool(v.Bool()))
	default:
		panic(fmt.Sprintf("report input holds a %s, which has no canonical form", v.Kind()))
	}
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
