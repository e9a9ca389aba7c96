package effort

// Report is the whole effort check: the census of a repository and what the transcripts show.
type Report struct {
	Repo     string     `json:"repo,omitempty"`
	Pins     []Pin      `json:"pins"`
	Unpinned []Pin      `json:"unpinned"`
	Settings []Settings `json:"settings"`
	// Observed is the transcript half, absent when no transcript was read.
	*Observed
	Warnings []Warning `json:"warnings"`
}

// AddObserved adds the transcript half and its warnings.
func (r *Report) AddObserved(o *Observed) {
	r.Observed = o
	r.Warnings = append(r.Warnings, o.Warnings...)
}

// NewReport starts a report from a census (nil: no repository was read).
func NewReport(repo string, c *Census) *Report {
	r := &Report{Repo: repo, Pins: []Pin{}, Unpinned: []Pin{}, Settings: []Settings{}, Warnings: []Warning{}}
	if c != nil {
		r.Pins, r.Unpinned, r.Settings = c.Pins, c.Unpinned, c.Settings
		r.Warnings = append(r.Warnings, c.Warnings...)
	}
	return r
}
