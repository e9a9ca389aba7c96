package faultpoint

import "testing"

func TestReach(t *testing.T) {
	Reach("create", "x") // no hook: nothing happens
	var got []string
	h := Hook(func(op, path string) { got = append(got, op+" "+path) })
	Installed.Store(&h)
	Reach("rename", "a/b")
	Installed.Store(nil)
	Reach("remove", "c")
	if len(got) != 1 || got[0] != "rename a/b" {
		t.Fatalf("hook saw %v", got)
	}
}
