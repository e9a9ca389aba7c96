package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/ldd-tools/tune/internal/report"
)

// NightlyLockName is the lock file in the weights directory that keeps two nightly runs apart.
const NightlyLockName = ".nightly.lock"

// Nightly is the cron job: under the nightly lock, it runs the evolve loop over the logs (never
// applying: a reviewer does) and writes the proposal's EVAL report. A second run while one holds the
// lock does nothing and says so.
func Nightly(env Env, opts EvolveOptions) (*EvolveResult, error) {
	opts.Apply = false
	if st, err := os.Stat(env.WeightsDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("weights store %s: not a directory (set --weights-dir or TUNE_WEIGHTS_DIR)", env.WeightsDir)
	}
	lockPath := filepath.Join(env.WeightsDir, NightlyLockName)
	lock := flock.New(lockPath)
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("nightly lock %s: %w", lockPath, err)
	}
	if !ok {
		return nil, fmt.Errorf("another tune nightly is running (it holds %s); this run did nothing", lockPath)
	}
	defer lock.Unlock()

	out, err := Evolve(env, opts)
	if err != nil {
		return nil, err
	}
	if out.ReportInput != nil {
		if out.Reports, err = report.WriteProposal(env.ReportsDir, *out.ReportInput); err != nil {
			return nil, err
		}
	}
	return out, nil
}
