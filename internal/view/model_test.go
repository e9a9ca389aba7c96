package view

import "testing"

func TestShortModel(t *testing.T) {
	for id, want := range map[string]string{
		"claude-haiku-4-5-20251001":  "haiku-4-5",
		"claude-sonnet-4-5-20250929": "sonnet-4-5",
		"claude-opus-4-6":            "opus-4-6",
		"claude-3-5-haiku-20241022":  "haiku-3-5",
		"claude-3-sonnet-20240229":   "sonnet-3",
		"claude-sonnet-4":            "sonnet-4",
		"claude-mystery-9":           "mystery-9",
		"<synthetic>":                "<synthetic>",
		"gpt-5":                      "gpt-5",
		"claude-":                    "claude-",
	} {
		if got := ShortModel(id); got != want {
			t.Errorf("ShortModel(%q) = %q, want %q", id, got, want)
		}
	}
}
