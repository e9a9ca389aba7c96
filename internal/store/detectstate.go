package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/regular"
)

// The nightly caches of the logs read — the detection's (docs/decisions.md#nightly-state) and the
// watch's (docs/decisions.md#watch-state) — live in the store directory, under CacheDir: no store
// reader lists it, and a write killed half-way leaves its temp file there, not among the store's files
// (which would read as an interrupted store operation).
const (
	CacheDir        = ".cache"
	DetectStateFile = "detect-state.json"
	WatchStateFile  = "watch-state.json"
)

// ReadDetectState returns the detection's cached state of the store at dir (readCache).
func ReadDetectState(dir string) []byte { return readCache(dir, DetectStateFile) }

// WriteDetectState replaces the detection's cached state of the store at dir (writeCache).
func WriteDetectState(dir string, data []byte) error { return writeCache(dir, DetectStateFile, data) }

// ReadWatchState returns the watch's cached state of the store at dir (readCache).
func ReadWatchState(dir string) []byte { return readCache(dir, WatchStateFile) }

// WriteWatchState replaces the watch's cached state of the store at dir (writeCache).
func WriteWatchState(dir string, data []byte) error { return writeCache(dir, WatchStateFile, data) }

// readCache returns the cache file name of the store at dir, nil when there is none that can be read:
// missing, not a regular file, a link, or over the caches' size limit. It is a cache, so every failure
// just means a full read; its content is checked by whoever decodes it.
func readCache(dir, name string) []byte {
	cache, err := cacheDir(dir)
	if err != nil {
		return nil
	}
	data, err := regular.ReadLimitedNoFollow(filepath.Join(cache, name), regular.DetectState)
	if err != nil {
		return nil
	}
	return data
}

// cacheDir is the cache directory of the store at dir, refused when it is there but not a directory
// itself: weights/.cache is written by a pull request like the rest of weights/, and a link there would
// make a night read a state from, write its caches and a .gitignore into, and remove the dot-temp files
// of a directory outside the store (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func cacheDir(dir string) (string, error) {
	cache := filepath.Join(dir, CacheDir)
	if fi, err := os.Lstat(cache); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("%s: not a directory (%s)", cache, fi.Mode().Type())
	}
	return cache, nil
}

// writeCache replaces the cache file name of the store at dir, through the one atomic writer. Its
// caller holds the nightly lock, so a temp file already in the cache directory is a killed write's: it
// is removed first (a kill leaves the cache as the night before, plus that temp file).
func writeCache(dir, name string, data []byte) error {
	cache, err := cacheDir(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(cache); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: not a directory of the store", cache)
	}
	if entries, err := os.ReadDir(cache); err == nil {
		for _, e := range entries {
			if isTemp(e.Name()) {
				if err := os.Remove(filepath.Join(cache, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	// The directory ignores itself in git, in projects made before `tune init` listed it too.
	if _, err := os.Lstat(filepath.Join(cache, ".gitignore")); errors.Is(err, fs.ErrNotExist) {
		if err := writeFileAtomic(filepath.Join(cache, ".gitignore"), []byte("*\n")); err != nil {
			return err
		}
	}
	return writeFileAtomic(filepath.Join(cache, name), data)
}
