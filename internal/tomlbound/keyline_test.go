package tomlbound

import "testing"

// TestKeyLine: the line of a key in every way TOML can define it, and 0 for a key the document does not
// define or a document that does not parse.
func TestKeyLine(t *testing.T) {
	doc := []byte("# tune.toml\n\n[evolve]\nmax_steps = 8\n\n[explore]\nmargin = 1\nshare = 0.5\n[watch]\n  alpha = 2 # comment\n")
	for _, c := range []struct {
		key  []string
		want int
	}{
		{[]string{"explore", "share"}, 8}, {[]string{"evolve", "max_steps"}, 4}, {[]string{"watch", "alpha"}, 10},
		{[]string{"watch", "min_tasks"}, 0}, {[]string{"nothing"}, 0}, {nil, 0},
	} {
		if got := KeyLine(doc, c.key...); got != c.want {
			t.Errorf("KeyLine(%q) = %d, want %d", c.key, got, c.want)
		}
	}
	for doc, want := range map[string]int{
		"explore.share = 0.5\n":                      1,
		"x = 1\nexplore = { margin = 1, share = 2 }": 2,
		"[explore]\n\"share\" = 2\n":                 2,
		"[explore\nshare = 2\n":                      0,
	} {
		if got := KeyLine([]byte(doc), "explore", "share"); got != want {
			t.Errorf("KeyLine(explore.share) in %q = %d, want %d", doc, got, want)
		}
	}
	if got := Where("tune.toml", doc, &KeyError{Key: []string{"explore", "share"}, Msg: "x"}); got != "tune.toml:8" {
		t.Errorf("Where = %q", got)
	}
}
