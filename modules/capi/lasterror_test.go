package main

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The last error is the calling OS thread's (lasterror.c). A C host calls and reads on
// one thread; a Go test calls the exports from a goroutine, which the scheduler may move
// to another thread between a failing call and the read of its message, and then reads
// another thread's message, or none. So every test that reads lastError after a call
// holds its goroutine on its thread (runtime.LockOSThread) from the call to the read.

// TestLastErrorIsTheCallers: a goroutine held on its thread reads its own call's message
// after every failing call, however the scheduler moves goroutines around it. Others
// fail calls of their own meanwhile, each leaving its message on the thread it ran on,
// and the caller yields between its call and its read, as the fuzz test's require calls
// may: without the lock, the read finds another goroutine's message within a few rounds.
func TestLastErrorIsTheCallers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.NumCPU())))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			id := uint64(1<<40 + g) // made-up buffer handles: each call fails naming its id
			for {
				select {
				case <-stop:
					return
				default:
				}
				abiCall(2, id, 0, 0, 0, nil, nil, 0)
				runtime.Gosched()
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()

	for i := range uint64(2000) {
		id := 1<<41 + i
		st := abiCall(2, id, 0, 0, 0, nil, nil, 0)
		require.NotZero(t, st)
		runtime.Gosched()
		if msg := lastError(); !strings.Contains(msg, hex(id)) {
			t.Fatalf("round %d: the last error after the call on %s reads %q: another thread's", i, hex(id), msg)
		}
	}
}

// TestLastErrorC: a success empties the calling thread's message, and a thread that failed
// a call gives its message buffer back when it exits (tests/lasterror_test.c).
func TestLastErrorC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/lasterror_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}

// TestSuccessEmptiesLastError: the header's "" when the thread's last call succeeded.
func TestSuccessEmptiesLastError(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NotZero(t, abiCall(2, 0, 0, 0, 0, nil, nil, 0)) // the size of the zero handle
	require.NotEmpty(t, lastError())
	dev, st := abiOpen("cpu")
	require.Zero(t, st, lastError())
	require.Empty(t, lastError(), "the message after a successful cubehip_device_open")
	require.NotZero(t, abiCall(2, 0, 0, 0, 0, nil, nil, 0))
	require.Zero(t, abiClose(dev))
	require.Empty(t, lastError(), "the message after a successful cubehip_device_close")
}
