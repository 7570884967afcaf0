package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCaptureWriteRefused: a write inside a C capture is refused at the call with
// CUBEHIP_ERROR_CAPTURE_REFUSED, in the C API's terms (no "prepare run", which the C ABI
// does not have), and the capture ends CUBEHIP_ERROR_CAPTURE_REFUSED; the stream captures
// again after.
func TestCaptureWriteRefused(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, st := abiOpen("cpu")
	require.Zero(t, st, lastError())
	defer abiClose(dev)
	require.Zero(t, abiCall(0, dev, 0, 1024, 0, nil, nil, 1), lastError())
	buf := newestHandle()

	require.Zero(t, abiCall(13, dev, 0, 0, 0, nil, nil, 1), lastError())
	st = abiCall(3, buf, 0, 0, 16, make([]byte, 16), nil, 1)
	require.Equal(t, "CUBEHIP_ERROR_CAPTURE_REFUSED", abiStatusName(st), lastError())
	require.Contains(t, lastError(), "cubehip_buffer_write: stream 1 is capturing")
	require.NotContains(t, lastError(), "prepare run")
	st = abiCall(14, dev, 0, 0, 0, nil, nil, 1)
	require.Equal(t, "CUBEHIP_ERROR_CAPTURE_REFUSED", abiStatusName(st), lastError())
	require.Contains(t, lastError(), "cubehip_capture_end")

	require.Zero(t, abiCall(13, dev, 0, 0, 0, nil, nil, 1), lastError())
	require.Zero(t, abiCall(14, dev, 0, 0, 0, nil, nil, 1), lastError())
}

// TestCaptureSharedStreamRefused: ids 1 and 129 share a device stream (the default 128):
// while 1 captures, work on 129 is refused naming both ids, instead of landing in 1's
// graph.
func TestCaptureSharedStreamRefused(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, st := abiOpen("cpu")
	require.Zero(t, st, lastError())
	defer abiClose(dev)
	k, st := abiKernel(dev, `extern "C" __global__ void nop() {}`, "nop", nil, 1)
	require.Zero(t, st, lastError())
	require.Zero(t, abiLaunchNone(k, 129), lastError())

	require.Zero(t, abiCall(13, dev, 0, 0, 0, nil, nil, 1), lastError())
	for name, call := range map[string]func() abiStatus{
		"cubehip_launch":        func() abiStatus { return abiLaunchNone(k, 129) },
		"cubehip_buffer_alloc":  func() abiStatus { return abiCall(0, dev, 0, 64, 0, nil, nil, 129) },
		"cubehip_device_sync":   func() abiStatus { return abiCall(7, dev, 0, 0, 0, nil, nil, 129) },
		"cubehip_capture_begin": func() abiStatus { return abiCall(13, dev, 0, 0, 0, nil, nil, 129) },
		"cubehip_capture_end":   func() abiStatus { return abiCall(14, dev, 0, 0, 0, nil, nil, 129) },
	} {
		st := call()
		require.Equal(t, "CUBEHIP_ERROR_INVALID_ARGUMENT", abiStatusName(st), "%s: %s", name, lastError())
		require.Contains(t, lastError(), name+": stream 129 shares its device stream with stream 1, which is capturing")
	}
	require.Zero(t, abiLaunchNone(k, 1), lastError()) // the capturing id itself records
	require.Zero(t, abiCall(14, dev, 0, 0, 0, nil, nil, 1), lastError())
	require.Zero(t, abiLaunchNone(k, 129), lastError())
}
