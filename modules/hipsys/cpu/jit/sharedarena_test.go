package jit_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// sharedFormsSource declares shared memory every way the jit rewrites into the shared
// arena: several declarators in one declaration, two dimensions, a struct, volatile, an
// alignment, a __device__ function's, a template's per instantiation, namespace scope,
// the dynamic buffer at namespace scope and through HIP_DYNAMIC_SHARED.
const sharedFormsSource = `#include <hip/hip_runtime.h>
struct pair_t { int a; float b; };
__shared__ int g_count[4];
extern __shared__ int g_dyn[];
__device__ int* scratch() {
	__shared__ int s[64];
	return s;
}
template <int I> __device__ int* per() {
	__shared__ int s[8];
	return s;
}
extern "C" __global__ void forms(int* out) {
	__shared__ int a[64], b[8][9], c;
	__shared__ pair_t p[4];
	volatile __shared__ float v[32];
	__shared__ __align__(64) double d[2];
	alignas(pair_t) __shared__ unsigned char raw[2 * sizeof(pair_t)];
	HIP_DYNAMIC_SHARED(int, dyn);
	int t = threadIdx.x;
	a[t] = t;
	if (t < 8) b[t][t + 1] = t * 10;
	if (t == 0) c = 5;
	if (t < 4) { p[t].a = t; p[t].b = 0.5f * t; g_count[t] = 100 + t; }
	if (t < 32) v[t] = t;
	if (t < 2) d[t] = 1.5 * t;
	scratch()[t] = 2 * t;
	if (t == 0) { per<0>()[0] = 7; per<1>()[0] = 8; }
	dyn[t] = 3 * t;
	if (t == 0) raw[0] = 1;
	__syncthreads();
	int r = a[63 - t] + (t < 8 ? b[t][t + 1] : 0) + c + scratch()[63 - t] + g_dyn[t] - dyn[t];
	if (t < 4) r += p[t].a + int(2 * p[t].b) + g_count[t];
	if (t < 32) r += int(v[31 - t]);
	if (t < 2) r += int(2 * d[t]);
	r += per<0>()[0] * 100 + per<1>()[0] * 1000;
	r += (((unsigned long)(void*)d) % 64 == 0) ? 0 : 1000000;
	r += raw[0] - 1 + ((((unsigned long)(void*)raw) % alignof(pair_t) == 0) ? 0 : 1000000);
	out[blockIdx.x * 64 + t] = r;
}
`

func TestSharedArenaForms(t *testing.T) {
	for _, regions := range []string{"1", "0"} {
		t.Run("regions="+regions, func(t *testing.T) {
			t.Setenv("CUBEHIP_CPU_REGIONS", regions)
			m := load(t, sharedFormsSource)
			out := alloc[int32](t, 3*64)
			launch(t, function(t, m, "forms"), dim(3, 1, 1), dim(64, 1, 1), 64*4, new(hipsys.KernelArgs).Ptr(out.dev()))
			for i, got := range out.s {
				tt := i % 64
				want := 63 - tt + 5 + 2*(63-tt) + 7*100 + 8*1000
				if tt < 8 {
					want += tt * 10
				}
				if tt < 4 {
					want += tt + tt + 100 + tt
				}
				if tt < 32 {
					want += 31 - tt
				}
				if tt < 2 {
					want += 3 * tt
				}
				require.Equal(t, int32(want), got, "thread %d", i)
			}
		})
	}
}

// overflowSource writes past its shared memory: past (k > 0) or before (k < 0) a static
// array, or past the dynamic buffer, in a kernel of each mode; after is a regions kernel
// whose cross-barrier local lives in a per-thread slot, the runtime state a shared
// overflow reached when shared arrays were thread-locals beside it.
const overflowSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void over_static(int* out, int k) {
	__shared__ int s[256];
	s[threadIdx.x] = 1;
	if (threadIdx.x == 0) s[k] = 2;
	out[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void over_static_regions(int* out, int k) {
	__shared__ int s[256];
	s[threadIdx.x] = 1;
	__syncthreads();
	if (threadIdx.x == 0) s[k] = 2;
	__syncthreads();
	out[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void over_dynamic(int* out, int k) {
	extern __shared__ int d[];
	d[threadIdx.x] = 1;
	__syncthreads();
	if (threadIdx.x == 0) d[k] = 2;
	out[threadIdx.x] = __syncthreads_count(d[threadIdx.x]);
}
extern "C" __global__ void after(const int* in, int* out) {
	__shared__ int s[256];
	int t = threadIdx.x;
	int v = in[blockIdx.x * 256 + t] * 2;
	__syncthreads();
	s[t] = v + 1;
	__syncthreads();
	out[blockIdx.x * 256 + t] = s[255 - t] + v;
}
`

// A kernel writing a page past a static shared array, before one, or past the dynamic
// buffer faults (hipErrorIllegalAddress naming the kernel) rather than writing over the
// runtime's state, and later launches on the same threads give right answers.
func TestSharedOverflowFaults(t *testing.T) {
	require.True(t, jit.CatchFaults)
	m := load(t, overflowSource)
	out := alloc[int32](t, 64*256)
	in := alloc[int32](t, 64*256)
	for i := range in.s {
		in.s[i] = int32(i % 1000)
	}
	check := func(t *testing.T) {
		t.Helper()
		var args hipsys.KernelArgs
		args.Ptr(in.dev()).Ptr(out.dev())
		for range 3 {
			launch(t, function(t, m, "after"), dim(64, 1, 1), dim(256, 1, 1), 0, &args)
			for i, got := range out.s {
				b, tt := i/256, i%256
				require.Equal(t, 2*in.s[b*256+255-tt]+1+2*in.s[i], got, "thread %d", i)
			}
		}
	}
	check(t)
	const page = 4096 / 4 // ints
	cases := []struct {
		kernel string
		k      int32
		shared uint32
	}{
		{"over_static", 256 + page, 0},
		{"over_static", -page, 0},
		{"over_static_regions", 256 + page, 0},
		{"over_static_regions", -1, 0},
		{"over_dynamic", 256 + page, 256 * 4},
		{"over_dynamic", 256, 256 * 4},
	}
	for _, c := range cases {
		var args hipsys.KernelArgs
		args.Ptr(out.dev()).I32(c.k)
		for _, grid := range []uint32{1, 64} {
			err := function(t, m, c.kernel).Launch(dim(grid, 1, 1), dim(256, 1, 1), c.shared, args.Buffer(), args.Offsets())
			require.Error(t, err, "%s [%d] with %d dynamic bytes, grid %d", c.kernel, c.k, c.shared, grid)
			requireFault(t, err, hipsys.ErrorIllegalAddress, c.kernel, "illegal memory access")
		}
		check(t)
	}
	// In bounds, the same kernels run.
	var args hipsys.KernelArgs
	args.Ptr(out.dev()).I32(5)
	launch(t, function(t, m, "over_dynamic"), dim(4, 1, 1), dim(256, 1, 1), 256*4, &args)
	assert.Equal(t, int32(256), out.s[0])
	launch(t, function(t, m, "over_static"), dim(4, 1, 1), dim(256, 1, 1), 0, &args)
	assert.Equal(t, int32(1), out.s[1])
}

// Static and dynamic shared memory together are held to the block's limit.
func TestSharedLimit(t *testing.T) {
	m := load(t, `extern "C" __global__ void big(int* out) {
	__shared__ int s[100 * 1024 / 4];
	extern __shared__ int d[];
	s[threadIdx.x] = 1;
	d[threadIdx.x] = 2;
	out[threadIdx.x] = s[threadIdx.x] + d[threadIdx.x];
}`)
	out := alloc[int32](t, 64)
	var args hipsys.KernelArgs
	args.Ptr(out.dev())
	f := function(t, m, "big")
	launch(t, f, dim(2, 1, 1), dim(64, 1, 1), jit.MaxSharedMemPerBlock-100*1024, &args)
	assert.Equal(t, int32(3), out.s[63])
	err := f.Launch(dim(2, 1, 1), dim(64, 1, 1), jit.MaxSharedMemPerBlock-100*1024+1, args.Buffer(), args.Offsets())
	require.Error(t, err)
	assert.Equal(t, hipsys.ErrorInvalidValue, statusOf(err))
	assert.Contains(t, err.Error(), "static __shared__")
}

// spinSource's kernels never end: a loop, fibers (a block vote), and a cooperative grid
// whose block 0 spins while the others wait at the grid's barrier.
const spinSource = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
extern "C" __global__ void spin(int* out) {
	out[blockIdx.x] = 1;
	while (1) {}
}
extern "C" __global__ void spin_fibers(int* out) {
	__shared__ int s[64];
	s[threadIdx.x % 64] = __syncthreads_count(1);
	if (threadIdx.x == 0) out[blockIdx.x] = 1;
	while (1) {}
}
extern "C" __global__ void spin_coop(int* out) {
	out[blockIdx.x] = 1;
	if (blockIdx.x == 0) while (1) {}
	cooperative_groups::this_grid().sync();
}
extern "C" __global__ void fill(int* out, int v) { out[blockIdx.x * blockDim.x + threadIdx.x] = v; }
`

// A kernel that never ends, under a time limit, ends its launch with
// hipErrorLaunchTimeOut naming the kernel and the limit; blocks not started never run,
// and the next launch works.
func TestTimeLimit(t *testing.T) {
	require.True(t, jit.CatchFaults)
	m := load(t, spinSource)
	const blocks = 1000
	out := alloc[int32](t, blocks*64)
	var args hipsys.KernelArgs
	args.Ptr(out.dev())
	prev := jit.TimeLimit()
	jit.SetTimeLimit(200 * time.Millisecond)
	t.Cleanup(func() { jit.SetTimeLimit(prev) })
	fill := func(t *testing.T) {
		t.Helper()
		var a hipsys.KernelArgs
		a.Ptr(out.dev()).I32(7)
		launch(t, function(t, m, "fill"), dim(blocks, 1, 1), dim(64, 1, 1), 0, &a)
		for i, v := range out.s {
			require.Equal(t, int32(7), v, "thread %d", i)
		}
		clear(out.s)
	}
	for _, c := range []struct {
		kernel string
		grid   uint32
		block  uint32
		coop   bool
	}{
		{"spin", 1, 64, false},
		{"spin", blocks, 64, false},
		{"spin_fibers", blocks, 64, false},
		{"spin_coop", uint32(min(jit.CooperativeLimit(dim(32, 1, 1), 0), 4)), 32, true},
	} {
		t.Run(c.kernel, func(t *testing.T) {
			clear(out.s)
			f := function(t, m, c.kernel)
			start := time.Now()
			var err error
			if c.coop {
				err = f.LaunchCooperative(dim(c.grid, 1, 1), dim(c.block, 1, 1), 0, args.Buffer(), args.Offsets())
			} else {
				err = f.Launch(dim(c.grid, 1, 1), dim(c.block, 1, 1), 0, args.Buffer(), args.Offsets())
			}
			took := time.Since(start)
			require.Error(t, err)
			assert.Equal(t, hipsys.ErrorLaunchTimeOut, statusOf(err), "%v", err)
			assert.Contains(t, err.Error(), "kernel "+c.kernel)
			assert.Contains(t, err.Error(), "200ms")
			assert.GreaterOrEqual(t, took, 200*time.Millisecond)
			assert.Less(t, took, 30*time.Second)
			if !c.coop && c.grid > 1 {
				started := 0
				for _, v := range out.s[:c.grid] {
					started += int(v)
				}
				assert.LessOrEqual(t, started, 2*runtime.NumCPU(), "blocks started after the limit")
			}
			fill(t)
		})
	}
	// Without a limit the same launches are not cut short.
	jit.SetTimeLimit(0)
	fill(t)
}

// sharedAPISource reads the shared arena's C API, as a checker compiled into the module
// would (prelude/cubehip_shared.h).
const sharedAPISource = `#include <hip/hip_runtime.h>
__device__ float helper() { __shared__ float h[3]; h[threadIdx.x % 3] = 1; return h[0]; }
extern "C" __global__ void api(unsigned long long* out) {
	__shared__ int a[10];
	__shared__ double b;
	a[threadIdx.x % 10] = 1;
	b = 2;
	helper();
	if (threadIdx.x != 0) return;
	cubehip_shared_now now = cubehip_shared_arena();
	unsigned n = 0;
	const cubehip_shared_var* v = cubehip_shared_vars(&n);
	out[0] = n;
	out[1] = now.static_size;
	out[2] = now.dyn_size;
	out[3] = (char*)a - now.base;
	out[4] = (char*)&b - now.base;
	out[5] = now.dyn - now.base;
	const char* names[3] = {"h", "a", "b"};
	for (unsigned k = 0; k < 3; k++)
		for (unsigned i = 0; i < n; i++)
			if (__builtin_strcmp(v[i].name, names[k]) == 0) {
				out[6 + 4 * k] = v[i].offset;
				out[7 + 4 * k] = v[i].size;
				out[8 + 4 * k] = v[i].line;
				out[9 + 4 * k] = v[i].kernel;
			}
}
`

// The arena's C API gives each static variable's name, offset, size, line and kernel,
// and the running block's base, static and dynamic sizes.
func TestSharedArenaAPI(t *testing.T) {
	m := load(t, sharedAPISource)
	out := alloc[uint64](t, 18)
	launch(t, function(t, m, "api"), dim(2, 1, 1), dim(32, 1, 1), 100, new(hipsys.KernelArgs).Ptr(out.dev()))
	assert.Equal(t, uint64(3), out.s[0], "variables")
	assert.Equal(t, uint64(72), out.s[1], "static size")
	assert.Equal(t, uint64(100), out.s[2], "dynamic size")
	assert.Equal(t, uint64(16), out.s[3], "a's offset")
	assert.Equal(t, uint64(64), out.s[4], "b's offset")
	assert.Greater(t, out.s[5], out.s[1], "the dynamic buffer above the static variables")
	assert.Equal(t, []uint64{0, 12, 2, 0}, out.s[6:10], "h: offset, size, line, kernel")
	assert.Equal(t, []uint64{16, 40, 4, 1}, out.s[10:14], "a")
	assert.Equal(t, []uint64{64, 8, 5, 1}, out.s[14:18], "b")
}
