package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Accuracy is tune accuracy: the dispatch-accuracy report over the closed tasks of the logs (the
// default log when none is given) in the last days, each task attributed to a weights version by its
// weights= or by the store log's apply times. The logs are streamed: memory follows the tasks counted,
// not the size of the logs.
func Accuracy(env Env, logs []string, days int) (*accuracy.Report, error) {
	versions, err := versionStartsIn(env.WeightsDir)
	if err != nil {
		return nil, err
	}
	b := accuracy.NewBuilder(accuracy.Options{Days: days, Now: env.Now(), Versions: versions})
	if err := streamLogs(logs, b); err != nil {
		return nil, err
	}
	return b.Report(), nil
}

// streamLogs feeds every task of the logs to b.
func streamLogs(logs []string, b *accuracy.Builder) error {
	if len(logs) == 0 {
		if _, err := os.Stat(traceparse.DefaultLog); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no trace log: %s does not exist here (pass the LOG paths to read)", traceparse.DefaultLog)
		}
		logs = []string{traceparse.DefaultLog}
	}
	for _, l := range logs {
		_, err := traceparse.StreamLog(l, func(t *traceparse.Task) error { b.Add(t); return nil }, nil)
		if errors.Is(err, fs.ErrNotExist) && l == traceparse.DefaultLog {
			return fmt.Errorf("no trace log at %s: run this in a project that has one, or name the LOG files", traceparse.DefaultLog)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// versionStartsIn reads when each weights version of the store in dir became active; a missing or
// empty store gives none (tasks are then split by their weights= alone).
func versionStartsIn(dir string) ([]accuracy.VersionStart, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	s, err := store.Open(dir, nil)
	if errors.Is(err, weights.ErrNoVersions) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return versionStarts(s)
}

// versionStarts are the store's activations as the accuracy split takes them. The init entry stands
// for "since always": it records when the log began, not when the first version took over
// (docs/decisions.md#watch).
func versionStarts(s *store.Store) ([]accuracy.VersionStart, error) {
	acts, err := s.Activations()
	if err != nil {
		return nil, err
	}
	vs := make([]accuracy.VersionStart, len(acts))
	for i, a := range acts {
		vs[i] = accuracy.VersionStart{Version: weights.VersionName(a.Version), From: a.Time}
		if a.Action == store.ActionInit {
			vs[i].From = time.Time{}
		}
	}
	return vs, nil
}
