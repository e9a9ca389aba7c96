package scorer

import "testing"

// The clamp holds an L4 bucket at L3 at standard creativity, or when none was recorded (the trace writes
// creativity= only from L3 on); a recorded task that ran at L4 was not held, whatever its record lacks.
func TestTheClampOnRecordedTasks(t *testing.T) {
	for _, c := range []struct {
		level, creativity string
		want              bool
	}{
		{"L3", "standard", true}, {"L3", "", true}, {"L2", "", true}, {"L3", "inventive", false},
		{"L3", "conservative", false}, {"L4", "", false}, {"L4", "inventive", false},
	} {
		if got := RanClamped(c.level, c.creativity); got != c.want {
			t.Errorf("RanClamped(%q, %q) = %v, want %v", c.level, c.creativity, got, c.want)
		}
	}
}
