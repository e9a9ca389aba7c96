package termtable

// SetWidth overrides the width taken from the writer (0 = unlimited).
func (t *Table) SetWidth(width int) { t.width = width }
