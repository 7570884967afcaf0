package server

// An imported buffer (Stream.Import) whose last use was work of another stream than its
// own is held by that stream's release worker until the work is done; the worker then
// gives it back on its own goroutine, but the import's release starts only under the
// Device's lock, which the worker must not take (the owner may be waiting on it). Without
// a goroutine to take the lock, the release waited for the caller's next Release, Flush,
// MemoryCleanup or Import, and a program that let go of an import and then made no call
// kept the other library's memory until Close (TestImportReleasedAfterAnotherStreamsWork).

// startReclaimer starts the goroutine that takes the lock for those releases, woken by
// the release workers (compute's OnBorrowsReturned) and ended by Close.
func (d *Device) startReclaimer() {
	d.reclaim = make(chan struct{}, 1)
	d.reclaimStop = make(chan struct{})
	d.srv.OnBorrowsReturned(func() {
		select {
		case d.reclaim <- struct{}{}:
		default: // a wake-up is pending; its reclaim sees these references too
		}
	})
	go func() {
		for {
			select {
			case <-d.reclaimStop:
				return
			case <-d.reclaim:
				if d.enter() != nil {
					return // closed: Close gives every import back
				}
				d.srv.ReclaimImports()
				d.leave()
				// The references given back may have left pages free.
				d.scheduleTrim()
			}
		}
	}()
}
