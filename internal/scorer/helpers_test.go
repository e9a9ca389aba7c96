package scorer

// view is the text view the group's patterns are matched in (wordtable_test checks the word table
// against it).
func (g group) view() view {
	switch g {
	case grpLayer:
		return viewLower
	case grpBumpMax, grpBump2, grpBump1:
		return viewOrigFold
	}
	return viewLowerFold
}

// foldCase reports whether the group's patterns were compiled with re.IGNORECASE.
func (g group) foldCase() bool { return g != grpLayer }

// String names an override kind in test failures.
var overrideKindNames = [...]string{"none", "explicit", "mode-alias", "max", "plusplus", "plus", "natural-max", "natural-2", "natural-1"}

func (k OverrideKind) String() string {
	if int(k) < len(overrideKindNames) {
		return overrideKindNames[k]
	}
	return "override(?)"
}
