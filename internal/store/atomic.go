package store

import (
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

// remove is os.Remove at a fault point.
func (s *Store) remove(path string) error {
	faultpoint.Reach(faultpoint.Remove, path)
	return os.Remove(path)
}
