package app

import "testing"

// TestScanOptionsMatchCCUsageReports: --ccusage session turns off the /btw rule and agent_progress
// copies (ccusage 20.0.24's session report applies neither); daily keeps both.
func TestScanOptionsMatchCCUsageReports(t *testing.T) {
	d, s := ScanOptions("daily", ""), ScanOptions("session", "")
	if !d.CCUsage || !d.MaxTotal || d.NoProgress || d.NoReplay {
		t.Errorf("daily: %+v", d)
	}
	if !s.CCUsage || !s.MaxTotal || !s.NoProgress || !s.NoReplay {
		t.Errorf("session: %+v", s)
	}
}
