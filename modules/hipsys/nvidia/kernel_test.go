package nvidia

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// testKernels is HIP source as it would be written for AMD: the HIP header, HIP's
// spellings of the indices, HIP's unmasked warp intrinsics and dynamic shared memory.
const testKernels = `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
	int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
	if (i < n) c[i] = a[i] + b[i];
}

// A shared-memory tree reduction with barriers: one sum per 256-thread block.
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
	__shared__ float part[256];
	int t = threadIdx.x, i = blockIdx.x * 256 + t;
	part[t] = i < n ? in[i] : 0.0f;
	__syncthreads();
	for (int s = 128; s > 0; s >>= 1) {
		if (t < s) part[t] += part[t + s];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = part[0];
}

// A warp reduction with HIP's __shfl_down: one sum per warp.
extern "C" __global__ void warp_sum(const int* in, int* out) {
	int v = in[blockIdx.x * blockDim.x + threadIdx.x];
	for (int d = warpSize / 2; d > 0; d >>= 1) v += __shfl_down(v, d);
	if (threadIdx.x % warpSize == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / warpSize] = v;
}

// __ballot, __shfl_xor, __shfl, __any/__all, HIP_DYNAMIC_SHARED and half in one kernel.
extern "C" __global__ void warp_misc(unsigned long long* ballot, int* xsum, int* bcast, int* anyall, float* half_out) {
	HIP_DYNAMIC_SHARED(int, dyn)
	int lane = threadIdx.x;
	dyn[lane] = lane;
	__syncthreads();
	unsigned long long b = __ballot(dyn[lane] % 2 == 1);
	int x = lane;
	for (int m = 16; m > 0; m >>= 1) x += __shfl_xor(x, m);
	int s = __shfl(lane * 10, 3);
	// The votes run in every lane: a vote inside a one-lane branch sees one lane.
	int votes = __any(lane == 5) + 2 * __all(lane < 32) + 4 * __all(lane < 5);
	if (lane == 0) {
		ballot[0] = b;
		xsum[0] = (int)(int64_t)(uint64_t)(uint32_t)x;
		bcast[0] = s;
		anyall[0] = votes;
		half_out[0] = __half2float(__hadd(__float2half(1.5f), __float2half(2.25f)));
	}
}
`

func compile(t testing.TB, p *Platform, src string, opts ...string) hipsys.Module {
	t.Helper()
	prog, err := p.RTCCreateProgram(src, "test.hip", nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.RTCDestroyProgram(prog)) }()
	if err := p.RTCCompileProgram(prog, opts); err != nil {
		log, _ := p.RTCGetProgramLog(prog)
		require.NoError(t, err, "log:\n%s", log)
	}
	code, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	t.Cleanup(func() {
		if p.modules.has(uintptr(m)) { // a test may have unloaded it itself
			assert.NoError(t, p.ModuleUnload(m))
		}
	})
	return m
}

func fn(t testing.TB, p *Platform, m hipsys.Module, name string) hipsys.Function {
	t.Helper()
	f, err := p.ModuleGetFunction(m, name)
	require.NoError(t, err)
	return f
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func fromF32(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func devBuf(t testing.TB, p *Platform, data []byte) hipsys.DevicePtr {
	t.Helper()
	d, err := p.Malloc(uint64(len(data)))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Free(d)) })
	require.NoError(t, p.MemcpyHtoD(d, data))
	return d
}

func readBack(t testing.TB, p *Platform, d hipsys.DevicePtr, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(out, d))
	return out
}

func TestHIPKernels(t *testing.T) {
	p := device(t)
	m := compile(t, p, testKernels, "-O3", "--std=c++17", "--offload-arch=gfx90a")

	t.Run("vector add", func(t *testing.T) {
		const n = 1000
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(i), float32(2*i)
		}
		da, db, dc := devBuf(t, p, fromF32(a)), devBuf(t, p, fromF32(b)), devBuf(t, p, make([]byte, 4*n))
		args := new(hipsys.KernelArgs).Ptr(da).Ptr(db).Ptr(dc).I32(n)
		require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "vector_add"), hipsys.Dim3{X: 4, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}, 0, 0, args))
		for i, v := range f32s(readBack(t, p, dc, 4*n)) {
			require.Equal(t, float32(3*i), v, "c[%d]", i)
		}
	})

	t.Run("block reduction", func(t *testing.T) {
		const n = 1024
		in := make([]float32, n)
		for i := range in {
			in[i] = 1
		}
		din, dout := devBuf(t, p, fromF32(in)), devBuf(t, p, make([]byte, 16))
		args := new(hipsys.KernelArgs).Ptr(din).Ptr(dout).I32(n)
		require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "block_sum"), hipsys.Dim3{X: 4, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}, 0, 0, args))
		assert.Equal(t, []float32{256, 256, 256, 256}, f32s(readBack(t, p, dout, 16)))
	})

	t.Run("warp reduction", func(t *testing.T) {
		in := make([]byte, 4*64)
		for i := range 64 {
			binary.LittleEndian.PutUint32(in[4*i:], uint32(i))
		}
		din, dout := devBuf(t, p, in), devBuf(t, p, make([]byte, 8))
		args := new(hipsys.KernelArgs).Ptr(din).Ptr(dout)
		require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "warp_sum"), hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, 0, args))
		out := readBack(t, p, dout, 8)
		assert.Equal(t, uint32(31*32/2), binary.LittleEndian.Uint32(out[0:]))
		assert.Equal(t, uint32((32+63)*32/2), binary.LittleEndian.Uint32(out[4:]))
	})

	t.Run("warp intrinsics, dynamic shared, half", func(t *testing.T) {
		bal, xs, bc, aa, hf := devBuf(t, p, make([]byte, 8)), devBuf(t, p, make([]byte, 4)), devBuf(t, p, make([]byte, 4)), devBuf(t, p, make([]byte, 4)), devBuf(t, p, make([]byte, 4))
		args := new(hipsys.KernelArgs).Ptr(bal).Ptr(xs).Ptr(bc).Ptr(aa).Ptr(hf)
		require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "warp_misc"), hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 32*4, 0, args))
		assert.Equal(t, uint64(0xaaaaaaaa), binary.LittleEndian.Uint64(readBack(t, p, bal, 8)))
		assert.Equal(t, uint32(31*32/2), binary.LittleEndian.Uint32(readBack(t, p, xs, 4)))
		assert.Equal(t, uint32(30), binary.LittleEndian.Uint32(readBack(t, p, bc, 4)))
		assert.Equal(t, uint32(1+2), binary.LittleEndian.Uint32(readBack(t, p, aa, 4)))
		assert.Equal(t, []float32{3.75}, f32s(readBack(t, p, hf, 4)))
	})
}

func TestRTCErrors(t *testing.T) {
	p := device(t)
	prog, err := p.RTCCreateProgram("extern \"C\" __global__ void k() { undefined_name = 1; }", "bad.hip", nil)
	require.NoError(t, err)
	defer p.RTCDestroyProgram(prog)
	err = p.RTCCompileProgram(prog, nil)
	assert.ErrorIs(t, err, hipsys.RTCErrorCompilation)
	assert.ErrorContains(t, err, "undefined_name", "the log is in the error")
	log, err := p.RTCGetProgramLog(prog)
	require.NoError(t, err)
	assert.Contains(t, log, "undefined_name")
	_, err = p.RTCGetCode(prog)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidProgram)

	assert.ErrorIs(t, p.RTCCompileProgram(12345, nil), hipsys.RTCErrorInvalidProgram)
	assert.ErrorIs(t, p.RTCDestroyProgram(12345), hipsys.RTCErrorInvalidProgram)

	// A user header is found by its include name.
	prog2, err := p.RTCCreateProgram("#include \"val.h\"\nextern \"C\" __global__ void k(int* o) { *o = VAL; }", "k.hip",
		[]hipsys.Header{{Name: "val.h", Source: "#define VAL 42\n"}})
	require.NoError(t, err)
	defer p.RTCDestroyProgram(prog2)
	require.NoError(t, p.RTCCompileProgram(prog2, []string{"-D", "UNUSED=1"}))
}

// The PTX path: the driver JIT-compiles what an NVRTC older than the device would give.
func TestModuleFromPTX(t *testing.T) {
	p := device(t)
	m, err := p.ModuleLoadData([]byte(emptyPTX))
	require.NoError(t, err)
	defer p.ModuleUnload(m)
	f := fn(t, p, m, "empty")
	require.NoError(t, p.ModuleLaunchKernel(f, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, nil))
	require.NoError(t, p.DeviceSynchronize())

	_, err = p.ModuleGetFunction(m, "missing")
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	_, err = p.ModuleLoadData([]byte("not an image"))
	assert.Error(t, err)
	_, err = p.ModuleLoadData(nil)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
}
