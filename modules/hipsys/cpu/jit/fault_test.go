package jit_test

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

const faultSource = `#include <hip/hip_runtime.h>
#include <cstdlib>
#include <cassert>
extern "C" __global__ void store(int* p, int v) { p[threadIdx.x] = v; }
extern "C" __global__ void divide(int* out, int a, int b) { out[threadIdx.x] = a / b; }
extern "C" __global__ void trap(int* out) { out[0] = 1; __trap(); }
extern "C" __global__ void aborts(int* out) { out[0] = 1; abort(); }
extern "C" __global__ void asserts(int* out, int v) { assert(v == 1); out[0] = v; }
// Block bad of the grid stores through p; every other thread marks its slot of out.
extern "C" __global__ void one_block(int* out, int* p, int bad, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if ((int)blockIdx.x == bad) p[threadIdx.x] = 1;
	else if (i < n) out[i] = 1;
}`

const barrierFaultSource = `#include <hip/hip_runtime.h>
// Thread 5 of block bad stores through p after the block's barrier; every thread of the
// other blocks writes its slot.
extern "C" __global__ void after_barrier(int* out, int* p, int bad) {
	__shared__ int s[256];
	s[threadIdx.x] = threadIdx.x;
	__syncthreads();
	if ((int)blockIdx.x == bad && threadIdx.x == 5) p[0] = s[4];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
// Recursion past the 64 KiB fiber stack, into its guard page.
__device__ int deep(int n) {
	volatile char frame[512];
	frame[0] = (char)n;
	return n == 0 ? 0 : deep(n - 1) + frame[0];
}
extern "C" __global__ void overflow(int* out, int n) {
	__syncthreads();
	out[threadIdx.x] = deep(n);
}`

// launchErr launches f and returns its error.
func launchErr(f *jit.Function, grid, block hipsys.Dim3, args *hipsys.KernelArgs) error {
	return f.Launch(grid, block, 0, args.Buffer(), args.Offsets())
}

// requireFault checks that err is a launch failure with status, naming the kernel and
// what went wrong.
func requireFault(t *testing.T, err error, status hipsys.Status, kernel string, what ...string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, status, statusOf(err), "%v", err)
	assert.Contains(t, err.Error(), "kernel "+kernel+" faulted")
	for _, w := range what {
		assert.Contains(t, err.Error(), w)
	}
}

func TestFaultingKernelFailsItsLaunch(t *testing.T) {
	require.True(t, jit.CatchFaults, "the tests run with faults caught")
	m := load(t, faultSource)
	out := alloc[int32](t, 1024)
	one, block := dim(1, 1, 1), dim(64, 1, 1)

	t.Run("null pointer store", func(t *testing.T) {
		err := launchErr(function(t, m, "store"), one, block, new(hipsys.KernelArgs).Ptr(0).I32(7))
		requireFault(t, err, hipsys.ErrorIllegalAddress, "store", "illegal memory access at 0x0", "SIGSEGV")
	})
	t.Run("unmapped address", func(t *testing.T) {
		err := launchErr(function(t, m, "store"), one, block, new(hipsys.KernelArgs).Ptr(0x10000).I32(7))
		requireFault(t, err, hipsys.ErrorIllegalAddress, "store", "at 0x10000")
	})
	t.Run("mapped past the end of its file", func(t *testing.T) {
		// A page of a file mapped, then the file cut to nothing: the page has no memory
		// behind it, and touching it is SIGBUS.
		f, err := os.Create(filepath.Join(t.TempDir(), "cut"))
		require.NoError(t, err)
		defer f.Close()
		require.NoError(t, f.Truncate(4096))
		page, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		require.NoError(t, err)
		defer syscall.Munmap(page)
		require.NoError(t, f.Truncate(0))
		addr := hipsys.DevicePtr(uintptrOf(page))
		err = launchErr(function(t, m, "store"), one, block, new(hipsys.KernelArgs).Ptr(addr).I32(7))
		requireFault(t, err, hipsys.ErrorIllegalAddress, "store", "SIGBUS")
	})
	t.Run("integer division by zero", func(t *testing.T) {
		err := launchErr(function(t, m, "divide"), one, block, new(hipsys.KernelArgs).Ptr(out.dev()).I32(7).I32(0))
		requireFault(t, err, hipsys.ErrorLaunchFailure, "divide", "integer division by zero", "SIGFPE")
	})
	t.Run("__trap", func(t *testing.T) {
		err := launchErr(function(t, m, "trap"), one, one, new(hipsys.KernelArgs).Ptr(out.dev()))
		requireFault(t, err, hipsys.ErrorLaunchFailure, "trap", "__trap()", "SIGILL")
	})
	t.Run("abort", func(t *testing.T) {
		err := launchErr(function(t, m, "aborts"), one, one, new(hipsys.KernelArgs).Ptr(out.dev()))
		requireFault(t, err, hipsys.ErrorLaunchFailure, "aborts", "abort()", "SIGABRT")
	})
	t.Run("failed assert", func(t *testing.T) {
		err := launchErr(function(t, m, "asserts"), one, one, new(hipsys.KernelArgs).Ptr(out.dev()).I32(2))
		requireFault(t, err, hipsys.ErrorLaunchFailure, "asserts", "SIGABRT")
	})
	// The same thread runs kernels on after each fault: nothing of the fault is left on it.
	launch(t, function(t, m, "store"), one, block, 0, new(hipsys.KernelArgs).Ptr(out.dev()).I32(9))
	assert.Equal(t, []int32{9, 9, 9}, out.s[:3])
}

// A fault in one block of a grid spread over the pool's workers ends the launch there;
// every worker keeps working, and the next launch of the same kernel runs every block.
func TestFaultOnAPoolWorker(t *testing.T) {
	m := load(t, faultSource)
	f := function(t, m, "one_block")
	const blocks, threads = 512, 64
	const n = blocks * threads
	out := alloc[int32](t, n)
	for _, bad := range []int32{0, 37, blocks - 1} {
		err := launchErr(f, dim(blocks, 1, 1), dim(threads, 1, 1), new(hipsys.KernelArgs).Ptr(out.dev()).Ptr(0).I32(bad).I32(n))
		requireFault(t, err, hipsys.ErrorIllegalAddress, "one_block", "in blocks [")
	}
	clear(out.s)
	launch(t, f, dim(blocks, 1, 1), dim(threads, 1, 1), 0, new(hipsys.KernelArgs).Ptr(out.dev()).Ptr(0).I32(-1).I32(n))
	for i, v := range out.s {
		if v != 1 {
			require.Equal(t, int32(1), v, "out[%d]", i)
		}
	}
}

// A barrier kernel faults on a fiber's stack, even by overflowing it: the launch ends,
// and the thread's fibers run the next launch.
func TestFaultOnAFiber(t *testing.T) {
	m := load(t, barrierFaultSource)
	f := function(t, m, "after_barrier")
	out := alloc[int32](t, 256*256)
	for _, grid := range []uint32{1, 256} { // inline, then over the pool
		err := launchErr(f, dim(grid, 1, 1), dim(256, 1, 1), new(hipsys.KernelArgs).Ptr(out.dev()).Ptr(0).I32(int32(grid-1)))
		requireFault(t, err, hipsys.ErrorIllegalAddress, "after_barrier")
	}
	err := launchErr(function(t, m, "overflow"), dim(1, 1, 1), dim(4, 1, 1), new(hipsys.KernelArgs).Ptr(out.dev()).I32(1_000_000))
	requireFault(t, err, hipsys.ErrorIllegalAddress, "overflow")

	launch(t, f, dim(256, 1, 1), dim(256, 1, 1), 0, new(hipsys.KernelArgs).Ptr(out.dev()).Ptr(0).I32(-1))
	for i, v := range out.s {
		if want := int32(255 - i%256); v != want {
			require.Equal(t, want, v, "out[%d]", i)
		}
	}
	launch(t, function(t, m, "overflow"), dim(1, 1, 1), dim(4, 1, 1), 0, new(hipsys.KernelArgs).Ptr(out.dev()).I32(3))
	assert.Equal(t, int32(3+2+1), out.s[0])
}

// With the handlers installed, Go's own signals are still Go's: a nil dereference in Go
// code panics and is recovered, and os/signal receives what it asked for.
func TestGoKeepsItsSignals(t *testing.T) {
	m := load(t, faultSource)
	require.Error(t, launchErr(function(t, m, "store"), dim(1, 1, 1), dim(1, 1, 1), new(hipsys.KernelArgs).Ptr(0).I32(1)),
		"a fault first, so the handlers are installed and have been used")

	recovered := func() (r any) {
		defer func() { r = recover() }()
		var p *int
		_ = *p
		return nil
	}()
	require.NotNil(t, recovered, "a nil dereference in Go panics")
	assert.Contains(t, recovered.(error).Error(), "nil pointer dereference")

	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	defer signal.Stop(c)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	select {
	case s := <-c:
		assert.Equal(t, syscall.SIGUSR1, s)
	case <-time.After(10 * time.Second):
		t.Fatal("os/signal did not deliver SIGUSR1")
	}
}

// CUBEHIP_CPU_CATCH_FAULTS=0 leaves a fault to Go's runtime, which ends the process: the
// debugging setting, for a core dump with the kernel's frames. Run in a child process.
func TestFaultsNotCaughtWhenTurnedOff(t *testing.T) {
	if os.Getenv("CUBEHIP_FAULT_CHILD") == "1" {
		m := load(t, faultSource)
		_ = launchErr(function(t, m, "store"), dim(1, 1, 1), dim(1, 1, 1), new(hipsys.KernelArgs).Ptr(0).I32(1))
		t.Fatal("the process outlived a fault with CUBEHIP_CPU_CATCH_FAULTS=0")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultsNotCaughtWhenTurnedOff$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CUBEHIP_FAULT_CHILD=1", "CUBEHIP_CPU_CATCH_FAULTS=0", "GOTRACEBACK=single")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Contains(t, string(out), "SIGSEGV")
	assert.NotContains(t, string(out), "outlived")
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
