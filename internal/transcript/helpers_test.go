package transcript

// retained is the memory kept for finalised requests: records, key table and the seq index.
func (d *Deduper) retained() int {
	n := len(d.table.slots)*16 + cap(d.offsets)*4
	for _, c := range d.chunks {
		n += cap(c)
	}
	return n
}

// Len is the number of requests so far.
func (d *Deduper) Len() int { return int(d.seq) }
