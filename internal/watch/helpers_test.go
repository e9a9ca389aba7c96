package watch

// Judge compares the tasks under in.Version with those under in.Parent and returns the verdict.
func Judge(in Input) *Result {
	b := NewBuilder(in)
	for i := range in.Tasks {
		b.Add(&in.Tasks[i])
	}
	return b.Result()
}
