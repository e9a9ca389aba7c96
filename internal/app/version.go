package app

import "runtime/debug"

// VersionInfo is what `tune version` prints: the release (Version, set at link time), the module
// version and the VCS revision the Go toolchain stamped into the binary (debug.ReadBuildInfo).
// Every key is always present in the JSON, so `jq -r .revision` prints an empty line, not "null", on
// a build without VCS information.
type VersionInfo struct {
	Version  string `json:"version"`
	Module   string `json:"module"`
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// BuildVersion reads the module version and the vcs.* settings of bi (nil when the binary has none).
func BuildVersion(release string, bi *debug.BuildInfo) VersionInfo {
	v := VersionInfo{Version: release, Module: "unknown"}
	if bi == nil {
		return v
	}
	v.Go = bi.GoVersion
	v.Module = bi.Main.Path + " " + bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}
