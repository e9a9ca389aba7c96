package transcript

import "sync"

// Ordered processes items 0…n-1 on up to workers goroutines and hands each result to use in index
// order, so that the outcome does not depend on the number of workers. Each goroutine gets its own
// state from newWorker (buffers reused across items). At most ahead results (at least one per
// worker) wait for their turn, which bounds what is held while one large item is still being
// worked on. wait, when set, receives each result instead of a plain channel read (a progress bar
// redraws while it waits). The first error use returns stops the run: items not yet started are
// not processed, and Ordered returns that error once every goroutine has finished.
func Ordered[W, R any](n, workers, ahead int, newWorker func() W, work func(w W, i int) R,
	wait func(<-chan R) R, use func(i int, r R) error) error {
	workers = max(1, min(workers, n))
	ahead = max(ahead, workers)
	slots := make([]chan R, n)
	for i := range slots {
		slots[i] = make(chan R, 1) // each slot is written once, so no worker ever blocks on it
	}
	jobs := make(chan int)
	inFlight := make(chan struct{}, ahead)
	stop := make(chan struct{})
	go func() {
		defer close(jobs)
		for i := 0; i < n; i++ {
			select {
			case inFlight <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case jobs <- i:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			state := newWorker()
			for i := range jobs {
				slots[i] <- work(state, i)
			}
		}()
	}
	var err error
	for i := 0; i < n; i++ {
		var r R
		if wait != nil {
			r = wait(slots[i])
		} else {
			r = <-slots[i]
		}
		<-inFlight
		if err = use(i, r); err != nil {
			close(stop)
			break
		}
	}
	wg.Wait()
	return err
}
