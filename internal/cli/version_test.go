package cli

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"testing"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
)

func TestBuildVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ldd-tools/tune", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "c1728c4aa"}, {Key: "vcs.time", Value: "2026-12-02T18:30:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	var b bytes.Buffer
	if err := view.Version(&b, app.BuildVersion("1.2.0", bi)); err != nil {
		t.Fatal(err)
	}
	want := "tune 1.2.0\nmodule: github.com/ldd-tools/tune v0.4.0\nrevision: c1728c4aa (modified) 2026-12-02T18:30:00Z\ngo: go1.26.8\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	_ = view.Version(&b, app.BuildVersion("dev", nil))
	if b.String() != "tune dev\nmodule: unknown\nrevision: unknown (built without VCS information)\ngo: \n" {
		t.Errorf("without build info: %q", b.String())
	}
	// Scripts read .revision: the key stays in the JSON (an empty string) when the binary has none.
	b.Reset()
	if err := view.Print(&b, true, app.BuildVersion("dev", nil), view.Version); err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "module", "revision", "time", "modified", "go"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("--json without build info lacks %q: %s", k, b.String())
		}
	}
}
