package app

import (
	"testing"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/report"
)

// TestTaskScores: the decision chart pairs each flagged task's score under the first parent with its
// score under the deciding candidate, by task; a task the deciding attempt did not rescore is left out.
func TestTaskScores(t *testing.T) {
	first := &evolve.Attempt{Motivating: []evolve.Rescore{
		{MetaTimestamp: "t1", Title: "a", ParentSum: -4, CandidateSum: -3},
		{MetaTimestamp: "t2", Title: "b", ParentSum: -5, CandidateSum: -4},
		{MetaTimestamp: "t3", Title: "c", ParentSum: -6},
	}}
	decisive := &evolve.Attempt{Motivating: []evolve.Rescore{
		{MetaTimestamp: "t2", Title: "b", ParentSum: -4, CandidateSum: -2},
		{MetaTimestamp: "t1", Title: "a", ParentSum: -3, CandidateSum: -1},
	}}
	got := taskScores(first, decisive)
	want := []report.TaskScore{{Title: "a", Parent: -2, Candidate: -0.5}, {Title: "b", Parent: -2.5, Candidate: -1}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("taskScores = %+v, want %+v", got, want)
	}
	if taskScores(nil, decisive) != nil {
		t.Error("no first attempt: want no scores")
	}
}
