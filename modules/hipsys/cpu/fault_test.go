package cpu

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const faultingSource = `#include <hip/hip_runtime.h>
#include <cstdlib>
extern "C" __global__ void store(int* p, int v) { p[threadIdx.x] = v; }
extern "C" __global__ void divide(int* out, int a, int b) { out[threadIdx.x] = a / b; }
extern "C" __global__ void trap(int* out) { out[0] = 1; __trap(); }
extern "C" __global__ void aborts(int* out) { out[0] = 1; abort(); }
`

// TestFaultingKernelFailsTheLaunchNotTheProcess: a kernel that faults returns from its
// launch at once, as every launch does, and the synchronizations that wait past it
// report the status a GPU gives for the fault, naming the kernel. The device is not
// damaged (the fault stopped the kernel at its bad access), so as for every
// asynchronous failure here the stream's synchronization acknowledges it and the next
// launch runs.
func TestFaultingKernelFailsTheLaunchNotTheProcess(t *testing.T) {
	p := newTest(t)
	prog, err := p.RTCCreateProgram(faultingSource, "faults.hip", nil)
	require.NoError(t, err)
	require.NoError(t, p.RTCCompileProgram(prog, nil))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	require.NoError(t, p.RTCDestroyProgram(prog))
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.ModuleUnload(mod)) }()
	fn := func(name string) hipsys.Function {
		f, err := p.ModuleGetFunction(mod, name)
		require.NoError(t, err)
		return f
	}
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.StreamDestroy(h)) }()
	out, err := p.Malloc(256)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(out)) }()
	block := hipsys.Dim3{X: 32, Y: 1, Z: 1}

	for _, tc := range []struct {
		kernel string
		args   *hipsys.KernelArgs
		block  hipsys.Dim3
		status hipsys.Status
		what   string
	}{
		{"store", new(hipsys.KernelArgs).Ptr(0).I32(1), block, hipsys.ErrorIllegalAddress, "illegal memory access at 0x0"},
		{"divide", new(hipsys.KernelArgs).Ptr(out).I32(1).I32(0), block, hipsys.ErrorLaunchFailure, "integer division by zero"},
		{"trap", new(hipsys.KernelArgs).Ptr(out), one, hipsys.ErrorLaunchFailure, "__trap()"},
		{"aborts", new(hipsys.KernelArgs).Ptr(out), one, hipsys.ErrorLaunchFailure, "abort()"},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			ev := newEvent(t, p)
			defer func() { assert.NoError(t, p.EventDestroy(ev)) }()
			require.NoError(t, p.ModuleLaunchKernel(fn(tc.kernel), one, tc.block, 0, h, tc.args), "the launch itself is queued")
			require.NoError(t, p.EventRecord(ev, h))
			err := p.EventSynchronize(ev)
			requireStatus(t, err, "hipEventSynchronize", tc.status)
			assert.Contains(t, err.Error(), "kernel "+tc.kernel+" faulted")
			assert.Contains(t, err.Error(), tc.what)
			requireStatus(t, p.StreamSynchronize(h), "hipStreamSynchronize", tc.status)

			require.NoError(t, p.ModuleLaunchKernel(fn("store"), one, block, 0, h, new(hipsys.KernelArgs).Ptr(out).I32(42)))
			require.NoError(t, p.StreamSynchronize(h), "the stream runs on after the fault")
			got := make([]byte, 4)
			require.NoError(t, p.MemcpyDtoH(got, out))
			assert.Equal(t, uint32(42), binary.LittleEndian.Uint32(got))
		})
	}
}
