package cpu

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A kernel that never ends, under the time limit $CUBEHIP_CPU_TIME_LIMIT gives at open,
// fails its launch with hipErrorLaunchTimeOut naming the kernel, delivered as every
// failed launch is, and the stream runs on.
func TestTimeLimitFailsTheLaunch(t *testing.T) {
	t.Setenv("CUBEHIP_CPU_TIME_LIMIT", "200ms")
	p := newTest(t)
	t.Cleanup(func() { p.SetTimeLimit(0) })
	assert.Equal(t, 200*time.Millisecond, p.TimeLimit())
	prog, err := p.RTCCreateProgram(`extern "C" __global__ void spin(int* out) { out[threadIdx.x] = 1; while (1) {} }
extern "C" __global__ void store(int* p, int v) { p[threadIdx.x] = v; }`, "spin.hip", nil)
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

	require.NoError(t, p.ModuleLaunchKernel(fn("spin"), hipsys.Dim3{X: 8, Y: 1, Z: 1}, block, 0, h, new(hipsys.KernelArgs).Ptr(out)))
	err = p.StreamSynchronize(h)
	requireStatus(t, err, "hipStreamSynchronize", hipsys.ErrorLaunchTimeOut)
	assert.Contains(t, err.Error(), "kernel spin")
	assert.Contains(t, err.Error(), "200ms")

	p.SetTimeLimit(0)
	require.NoError(t, p.ModuleLaunchKernel(fn("store"), one, block, 0, h, new(hipsys.KernelArgs).Ptr(out).I32(42)))
	require.NoError(t, p.StreamSynchronize(h), "the stream runs on after the time-out")
	got := make([]byte, 4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, uint32(42), binary.LittleEndian.Uint32(got))
}
