package cpu

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

const kernelSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void fill(float* out, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + (float)i;
}
extern "C" __global__ void empty() {}
extern "C" __global__ void slow_write(unsigned* out, unsigned long long iters, unsigned v) {
    volatile unsigned long long x = 0;
    for (unsigned long long i = 0; i < iters; i++) x += i;
    out[0] = v;
}
`

// loadKernels compiles kernelSource and returns its functions.
func loadKernels(t testing.TB, p *Platform) (fill, empty hipsys.Function) {
	t.Helper()
	prog, err := p.RTCCreateProgram(kernelSource, "kernels.hip", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.RTCDestroyProgram(prog)) }()
	require.NoError(t, p.RTCCompileProgram(prog, []string{"-O2"}))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	t.Cleanup(func() {
		if p.modules.get(uintptr(mod)) != nil { // a test may have unloaded it
			assert.NoError(t, p.ModuleUnload(mod))
		}
	})
	fill, err = p.ModuleGetFunction(mod, "fill")
	require.NoError(t, err)
	again, err := p.ModuleGetFunction(mod, "fill")
	require.NoError(t, err)
	assert.Equal(t, fill, again)
	empty, err = p.ModuleGetFunction(mod, "empty")
	require.NoError(t, err)
	return fill, empty
}

func readFloats(t testing.TB, p *Platform, d hipsys.DevicePtr, n int) []float32 {
	raw := make([]byte, 4*n)
	require.NoError(t, p.MemcpyDtoH(raw, d))
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func TestLaunch(t *testing.T) {
	p := newTest(t)
	fill, _ := loadKernels(t, p)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	const n = 1000
	d, err := p.Malloc(4 * n)
	require.NoError(t, err)

	var args hipsys.KernelArgs
	args.Ptr(d).F32(1).U32(n)
	require.NoError(t, p.ModuleLaunchKernel(fill, hipsys.Dim3{X: 4, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}, 0, h, &args))
	// The caller may reuse its KernelArgs at once: the launch copied them.
	args.Reset().Ptr(0).F32(-5).U32(0)
	require.NoError(t, p.StreamSynchronize(h))
	got := readFloats(t, p, d, n)
	assert.Equal(t, float32(1), got[0])
	assert.Equal(t, float32(n), got[n-1])

	// Captured launch, replayed with the arguments it had when captured.
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	args.Reset().Ptr(d).F32(100).U32(n)
	require.NoError(t, p.ModuleLaunchKernel(fill, hipsys.Dim3{X: 4, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}, 0, h, &args))
	args.Reset()
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	nodes, err := p.GraphGetNodes(g)
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	typ, err := p.GraphNodeGetType(nodes[0])
	require.NoError(t, err)
	assert.Equal(t, hipsys.GraphNodeKernel, typ)
	assert.Equal(t, float32(1), readFloats(t, p, d, 1)[0], "a captured launch must not run")
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphLaunch(x, h))
	require.NoError(t, p.StreamSynchronize(h))
	assert.Equal(t, float32(100+n-1), readFloats(t, p, d, n)[n-1])

	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.GraphDestroy(g))
	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.Free(d))
}

func TestLaunchAllocatesNothing(t *testing.T) {
	p := newTest(t)
	_, empty := loadKernels(t, p)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	var args hipsys.KernelArgs // empty takes no arguments
	// Warm up: the stream allocates commands until its pool covers the most a producer
	// can run ahead of the worker (maxPending); from then on launches reuse them.
	for i := 0; i < 2*maxPending; i++ {
		require.NoError(t, p.ModuleLaunchKernel(empty, one, one, 0, 0, &args))
	}
	require.NoError(t, p.StreamSynchronize(0))
	allocs := testing.AllocsPerRun(1000, func() {
		_ = p.ModuleLaunchKernel(empty, one, one, 0, 0, &args)
	})
	require.NoError(t, p.StreamSynchronize(0))
	assert.Zero(t, allocs)
}

func TestLaunchErrors(t *testing.T) {
	p := newTest(t)
	// A function object the checks below never run: shape errors come first.
	fh := hipsys.Function(p.functions.add(&function{mod: &module{}}))
	defer p.functions.remove(uintptr(fh))
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	cases := []struct {
		name        string
		fn          hipsys.Function
		grid, block hipsys.Dim3
		shmem       uint32
		stream      hipsys.Stream
		want        hipsys.Status
	}{
		{"unknown function", 0x5555, one, one, 0, 0, hipsys.ErrorInvalidHandle},
		{"zero grid", fh, hipsys.Dim3{X: 0, Y: 1, Z: 1}, one, 0, 0, hipsys.ErrorInvalidConfiguration},
		{"zero block", fh, one, hipsys.Dim3{X: 1, Y: 0, Z: 1}, 0, 0, hipsys.ErrorInvalidConfiguration},
		{"grid y too big", fh, hipsys.Dim3{X: 1, Y: 65536, Z: 1}, one, 0, 0, hipsys.ErrorInvalidConfiguration},
		{"grid x too big", fh, hipsys.Dim3{X: 1 << 31, Y: 1, Z: 1}, one, 0, 0, hipsys.ErrorInvalidConfiguration},
		{"block z too big", fh, one, hipsys.Dim3{X: 1, Y: 1, Z: 65}, 0, 0, hipsys.ErrorInvalidConfiguration},
		{"block over max threads", fh, one, hipsys.Dim3{X: 1024, Y: 2, Z: 1}, 0, 0, hipsys.ErrorInvalidConfiguration},
		{"too much shared memory", fh, one, one, sharedMemPerBlock + 1, 0, hipsys.ErrorInvalidValue},
		{"unknown stream", fh, one, one, 0, 0x6666, hipsys.ErrorInvalidHandle},
	}
	big := new(hipsys.KernelArgs).Raw(make([]byte, jit.MaxParamBytes+1), 8)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := p.ModuleLaunchKernel(c.fn, c.grid, c.block, c.shmem, c.stream, nil)
			requireStatus(t, err, "hipModuleLaunchKernel", c.want)
		})
	}
	requireStatus(t, p.ModuleLaunchKernel(fh, one, one, 0, 0, big), "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)

	_, err := p.ModuleLoadData(nil)
	requireStatus(t, err, "hipModuleLoadData", hipsys.ErrorInvalidImage)
	_, err = p.ModuleGetFunction(0x7777, "fill")
	requireStatus(t, err, "hipModuleGetFunction", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.ModuleUnload(0x7777), "hipModuleUnload", hipsys.ErrorInvalidHandle)
}

func TestRTCErrors(t *testing.T) {
	p := newTest(t)
	_, err := p.RTCCreateProgram("", "x", nil)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidInput)
	const bogus = 0x8888
	assert.ErrorIs(t, p.RTCCompileProgram(bogus, nil), hipsys.RTCErrorInvalidProgram)
	_, err = p.RTCGetProgramLog(bogus)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidProgram)
	_, err = p.RTCGetCode(bogus)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidProgram)
	assert.ErrorIs(t, p.RTCDestroyProgram(bogus), hipsys.RTCErrorInvalidProgram)

	prog, err := p.RTCCreateProgram("extern \"C\" __global__ void k() { this is not C++ }", "", nil)
	require.NoError(t, err)
	_, err = p.RTCGetCode(prog)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidInput, "no code before a compile")
	err = p.RTCCompileProgram(prog, nil)
	require.Error(t, err)
	var he *hipsys.Error
	require.True(t, errors.As(err, &he))
	assert.Equal(t, "hiprtcCompileProgram", he.Call)
	assert.Equal(t, hipsys.RTCErrorCompilation, he.RTCStatus)
	log, err := p.RTCGetProgramLog(prog)
	require.NoError(t, err)
	assert.NotEmpty(t, log)
	assert.Contains(t, he.Detail, strings.TrimSpace(log))
	_, err = p.RTCGetCode(prog)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidInput)
	require.NoError(t, p.RTCDestroyProgram(prog))
}

// BenchmarkCPULaunchEnqueue is the host cost of one ModuleLaunchKernel of an empty
// 1-block kernel (budget: 2 µs).
func BenchmarkCPULaunchEnqueue(b *testing.B) {
	p := newTest(b)
	_, empty := loadKernels(b, p)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	var args hipsys.KernelArgs
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.ModuleLaunchKernel(empty, one, one, 0, h, &args); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/launch")
	require.NoError(b, p.StreamSynchronize(h))
	require.NoError(b, p.StreamDestroy(h))
}

// BenchmarkCPULaunchSync is one launch of an empty kernel and a StreamSynchronize
// (budget: 20 µs).
func BenchmarkCPULaunchSync(b *testing.B) {
	p := newTest(b)
	_, empty := loadKernels(b, p)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	var args hipsys.KernelArgs
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.ModuleLaunchKernel(empty, one, one, 0, h, &args); err != nil {
			b.Fatal(err)
		}
		if err := p.StreamSynchronize(h); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/launch+sync")
	require.NoError(b, p.StreamDestroy(h))
}
