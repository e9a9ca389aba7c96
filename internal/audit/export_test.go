package audit

// The helpers render_test.go (package audit_test) shares with this package's tests.
var (
	Scan          = scan
	EffortArms    = effortArms
	SplitSpotter  = splitSpotter
	SpotterDir    = spotterDir
	EffortDir     = effortDir
	SyntheticRoot = syntheticRoot
	RecordedRoot  = recordedRoot
	SameCents     = sameCents
	SkipReasons   = skipReasons
)
