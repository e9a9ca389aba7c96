package effort

// The helpers render_test.go (package effort_test) shares with this package's tests.
var (
	ObserveDesign = observeDesign
	DesignCensus  = designCensus
	SeveralShifts = severalShifts
)
