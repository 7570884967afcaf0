package main

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// usageOf is the device's memory usage: bytes in use and reserved.
func usageOf(t *testing.T, dev uint64) (inUse, reserved uint64) {
	u, st := abiMemoryUsage(dev)
	require.Zero(t, st, lastError())
	return u[0], u[1]
}

// TestReservedMemoryWithThreads: 64 host threads, each on its own stream id with a
// 400 KiB buffer, as a thread-per-request host does. Each id gets a device stream with
// pools of its own; what they reserve must stay bounded by what is in use, during the
// work and once the threads have released their buffers.
func TestReservedMemoryWithThreads(t *testing.T) {
	const threads, size = 64, 400 << 10
	dev, st := abiOpen("cpu")
	require.Zero(t, st, lastError())
	defer abiClose(dev)
	data := make([]byte, size)
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	ready.Add(threads)
	for i := range threads {
		done.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s := uint64(i + 1)
			buf, st := abiAlloc(dev, s, size)
			require.Zero(t, st, lastError())
			require.Zero(t, abiCall(3, buf, 0, 0, size, data, nil, s), lastError())
			// Each thread reads into memory of its own: the threads share only what they write.
			require.Zero(t, abiCall(4, buf, 0, 0, size, make([]byte, size), nil, s), lastError())
			ready.Done()
			<-release
			require.Zero(t, abiCall(1, buf, 0, 0, 0, nil, nil, s), lastError())
			require.Zero(t, abiCall(7, dev, 0, 0, 0, nil, nil, s), lastError())
		})
	}
	ready.Wait()
	inUse, reserved := usageOf(t, dev)
	t.Logf("%d threads, live: %d KiB in use, %d KiB reserved", threads, inUse>>10, reserved>>10)
	close(release)
	done.Wait()
	inUse, reserved = usageOf(t, dev)
	t.Logf("%d threads, released: %d KiB in use, %d KiB reserved", threads, inUse>>10, reserved>>10)
	// The trim the releases scheduled gives the idle pages back without a
	// cubehip_memory_cleanup.
	require.Eventually(t, func() bool {
		inUse, reserved = usageOf(t, dev)
		return reserved <= 2*inUse+trimSlack
	}, 5*time.Second, 10*time.Millisecond, "%d KiB reserved for %d KiB in use", reserved>>10, inUse>>10)
	t.Logf("%d threads, after the trim: %d KiB in use, %d KiB reserved", threads, inUse>>10, reserved>>10)
}
