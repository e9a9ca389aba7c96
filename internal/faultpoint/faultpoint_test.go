package faultpoint

import "testing"

func TestReach(t *testing.T) {
	Reach("create", "x") // no hook: nothing happens
	var got []string
	Set(func(op, path string) { got = append(got, op+" "+path) })
	Reach("rename", "a/b")
	Set(nil)
	Reach("remove", "c")
	if len(got) != 1 || got[0] != "rename a/b" {
		t.Fatalf("hook saw %v", got)
	}
}
