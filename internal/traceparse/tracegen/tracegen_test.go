package tracegen

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"16MB": 16 << 20, "1GB": 1 << 30, "300kb": 300 << 10, "4096": 4096, " 8 MB ": 8 << 20, "12B": 12} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MB", "-1MB", "1TB", "1.5GB", "x"} {
		if got, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}
