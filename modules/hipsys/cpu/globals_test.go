package cpu

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const globalsSource = `#include <hip/hip_runtime.h>
__constant__ float weights[3] = {0.5f, 1.5f, 2.5f};
__device__ int hits;
extern const int limits[2] = {4, 5};
namespace tables { __device__ int inner[2]; }
extern "C" __global__ void weigh(float* out) {
    const int i = threadIdx.x;
    out[i] = weights[i % 3] * (float)(limits[i % 2] + tables::inner[i % 2]);
    atomicAdd(&hits, 1);
}
`

func loadGlobals(t *testing.T, p *Platform) hipsys.Module {
	t.Helper()
	prog, err := p.RTCCreateProgram(globalsSource, "globals.hip", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.RTCDestroyProgram(prog)) }()
	require.NoError(t, p.RTCCompileProgram(prog, []string{"-O3"}))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	return mod
}

// A module variable is host memory of the loaded kernel object that the kernel reads
// and writes directly: the host's writes through the copy calls reach the kernel, the
// kernel's reach the host, and a variable inside a namespace answers to its mangled name.
func TestModuleGlobalsAreTheKernelsMemory(t *testing.T) {
	p := newTest(t)
	mod := loadGlobals(t, p)
	defer func() { require.NoError(t, p.ModuleUnload(mod)) }()

	w, size, err := p.ModuleGetGlobal(mod, "weights")
	require.NoError(t, err)
	require.Equal(t, uint64(12), size)
	hits, size, err := p.ModuleGetGlobal(mod, "hits")
	require.NoError(t, err)
	require.Equal(t, uint64(4), size)
	inner, size, err := p.ModuleGetGlobal(mod, "_ZN6tables5innerE")
	require.NoError(t, err)
	require.Equal(t, uint64(8), size)

	var raw [12]byte
	require.NoError(t, p.MemcpyDtoH(raw[:], w))
	assert.Equal(t, float32(1.5), f32At(raw[:], 1), "the initializer's value")
	require.NoError(t, p.MemcpyHtoD(w, f32s(2, 3, 4)))
	require.NoError(t, p.MemcpyHtoD(inner, i32s(10, 20)))
	require.NoError(t, p.Memset(hits, 0, 4))

	fn, err := p.ModuleGetFunction(mod, "weigh")
	require.NoError(t, err)
	out, err := p.Malloc(4 * 6)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(out)) }()
	require.NoError(t, p.ModuleLaunchKernel(fn, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 6, Y: 1, Z: 1}, 0, hipsys.NullStream,
		new(hipsys.KernelArgs).Ptr(out)))
	require.NoError(t, p.DeviceSynchronize())
	got := readFloats(t, p, out, 6)
	assert.Equal(t, []float32{2 * 14, 3 * 25, 4 * 14, 2 * 25, 3 * 14, 4 * 25}, got)
	var n [4]byte
	require.NoError(t, p.MemcpyDtoH(n[:], hits))
	assert.Equal(t, uint32(6), binary.LittleEndian.Uint32(n[:]), "every thread's atomicAdd")
}

// The range checks hold for module variables as for allocations: a copy past a
// variable's end, a write to one declared const (read-only memory here, where the write
// would fault), an unknown name, and any use after the module is unloaded are errors.
func TestModuleGlobalErrors(t *testing.T) {
	p := newTest(t)
	mod := loadGlobals(t, p)
	w, _, err := p.ModuleGetGlobal(mod, "weights")
	require.NoError(t, err)
	requireStatus(t, p.MemcpyHtoD(w+4, make([]byte, 12)), "hipMemcpyHtoD", hipsys.ErrorInvalidValue)
	require.NoError(t, p.MemcpyHtoD(w+4, make([]byte, 8)), "an interior range is fine")

	limits, size, err := p.ModuleGetGlobal(mod, "limits")
	require.NoError(t, err)
	require.Equal(t, uint64(8), size)
	var raw [8]byte
	require.NoError(t, p.MemcpyDtoH(raw[:], limits), "a const variable can be read")
	assert.Equal(t, uint32(5), binary.LittleEndian.Uint32(raw[4:]))
	requireStatus(t, p.MemcpyHtoD(limits, raw[:]), "hipMemcpyHtoD", hipsys.ErrorInvalidValue)
	requireStatus(t, p.Memset(limits, 0, 8), "hipMemset", hipsys.ErrorInvalidValue)

	_, _, err = p.ModuleGetGlobal(mod, "nothing_here")
	requireStatus(t, err, "hipModuleGetGlobal", hipsys.ErrorNotFound)
	assert.ErrorContains(t, err, "nothing_here")
	_, _, err = p.ModuleGetGlobal(mod, "weigh")
	requireStatus(t, err, "hipModuleGetGlobal", hipsys.ErrorNotFound)

	require.NoError(t, p.ModuleUnload(mod))
	requireStatus(t, p.MemcpyHtoD(w, make([]byte, 4)), "hipMemcpyHtoD", hipsys.ErrorInvalidValue)
	_, _, err = p.ModuleGetGlobal(mod, "weights")
	requireStatus(t, err, "hipModuleGetGlobal", hipsys.ErrorInvalidHandle)
}

// Two loads of one code object share its variables (the loader maps the object once):
// the range stays usable until the second module is unloaded too.
func TestModuleGlobalSharedByTwoLoads(t *testing.T) {
	p := newTest(t)
	a, b := loadGlobals(t, p), loadGlobals(t, p)
	wa, _, err := p.ModuleGetGlobal(a, "weights")
	require.NoError(t, err)
	wb, _, err := p.ModuleGetGlobal(b, "weights")
	require.NoError(t, err)
	require.Equal(t, wa, wb)
	require.NoError(t, p.ModuleUnload(a))
	require.NoError(t, p.MemcpyHtoD(wb, f32s(1, 2, 3)), "b still holds the variable")
	require.NoError(t, p.ModuleUnload(b))
	requireStatus(t, p.MemcpyHtoD(wb, f32s(1, 2, 3)), "hipMemcpyHtoD", hipsys.ErrorInvalidValue)
}

func f32s(v ...float32) []byte {
	b, _ := binary.Append(nil, binary.LittleEndian, v)
	return b
}

func i32s(v ...int32) []byte {
	b, _ := binary.Append(nil, binary.LittleEndian, v)
	return b
}

func f32At(b []byte, i int) float32 {
	var f float32
	_, _ = binary.Decode(b[4*i:], binary.LittleEndian, &f)
	return f
}
