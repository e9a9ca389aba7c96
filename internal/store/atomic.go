package store

import "github.com/ldd-tools/tune/internal/atomicfile"

// writeFileAtomic writes a store file (0644) through tune's one atomic writer.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Public)
}

// syncDir makes a rename in dir durable (see atomicfile.SyncDir).
func syncDir(dir string) error { return atomicfile.SyncDir(dir) }
