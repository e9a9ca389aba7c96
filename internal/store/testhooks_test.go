package store

import (
	"errors"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/faultpoint"
	"github.com/ldd-tools/tune/internal/weights"
)

// The store's test-only helpers: nothing in tune calls them (deadcode, make test).

// ActiveWeights is the active weights of the store in dir, derived from the evolution log when there
// is one, else the highest version (the commands go through app.ActiveWeights).
func ActiveWeights(dir string) (weights.Weights, error) {
	st, err := loadReadable(dir)
	if err != nil {
		return weights.Weights{}, err
	}
	return st.loadVersion(st.active())
}

// Steps lists the write steps (faultpoint.Step) of an apply that harvests the given fixture files, in
// order. Bootstrapping a store without a log adds "init-sum" and "init-log" before them.
func Steps(harvested ...string) []string {
	steps := []string{"pending", "version"}
	for _, h := range harvested {
		steps = append(steps, "fixture:"+filepath.Base(h))
	}
	return append(steps, "sum", "log", "done")
}

// ErrInjectedCrash is what crashAt returns when its fault point stopped the operation.
var ErrInjectedCrash = errors.New("injected crash")

// crash is the panic that stops an operation at a fault point.
type crash struct{}

// crashAt runs op with tune's one fault-injection mechanism (faultpoint) armed: at the first fault
// point where stop says so the operation stops, as if the process had died there, by a panic that
// unwinds it (deferred unlocks run, as the kernel would release them; nothing else does). It returns
// ErrInjectedCrash when it stopped op, else op's error.
func crashAt(stop func(op, path string) bool, op func() error) (err error) {
	h := faultpoint.Hook(func(o, p string) {
		if stop(o, p) {
			panic(crash{})
		}
	})
	faultpoint.Installed.Store(&h)
	defer faultpoint.Installed.Store(nil)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			err = ErrInjectedCrash
		}
	}()
	return op()
}

// afterStep stops an operation right after its write step of that name (see Steps).
func afterStep(name string) func(op, path string) bool {
	return func(op, path string) bool { return op == faultpoint.Step && path == name }
}

// atOperation stops an operation just before its k-th file operation (k from 1): the creation of an
// atomic write's temp file, or a removal. Killed inside an atomic write, a process leaves at most a
// temp file (the destination is old or new, never half), and the temp file is there at Create: the
// cleanup of stale temp files is exercised.
func atOperation(k int) func(op, path string) bool {
	n := 0
	return func(op, path string) bool {
		if op != faultpoint.Create && op != faultpoint.Remove {
			return false
		}
		n++
		return n == k
	}
}
