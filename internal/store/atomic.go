package store

import (
	"fmt"
	"os"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/faultpoint"
)

// writeFileAtomic writes a store file (0644) through tune's one atomic writer.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Public)
}

// syncDir makes a rename in dir durable (see atomicfile.SyncDir).
func syncDir(dir string) error { return atomicfile.SyncDir(dir) }

// writeFile is writeFileAtomic behind the KillAt test hook.
func (s *Store) writeFile(path string, data []byte) error {
	if err := s.kill(); err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// remove is os.Remove behind the KillAt test hook.
func (s *Store) remove(path string) error {
	if err := s.kill(); err != nil {
		return err
	}
	faultpoint.Reach(faultpoint.Remove, path)
	return os.Remove(path)
}

// kill is the KillAt test hook: the KillAt-th file operation of this Store (an atomic write, or a
// removal) does not happen and the operation stops there, as if the process had been killed just
// before it. Killed inside an atomic write, a process leaves at most a temp file (the destination is
// old or new, never half): the hook leaves one too, so the cleanup of stale temp files is exercised.
func (s *Store) kill() error {
	if s.KillAt <= 0 {
		return nil
	}
	s.ops++
	if s.ops == s.KillAt {
		_ = os.WriteFile(s.path(".killed.tmp-hook"), []byte("partial"), 0o644)
		return fmt.Errorf("%w at file operation %d", ErrInjectedCrash, s.ops)
	}
	return nil
}
