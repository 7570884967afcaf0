package jit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

const benchKernels = `
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
// The same with the unsigned index CubeCL and some HIP code use.
extern "C" __global__ void vadd_u(const float* a, const float* b, float* c, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void empty() {}
`

const benchBarrierKernels = `
extern "C" __global__ void reduce(const float* in, float* out) {
	__shared__ float s[256];
	unsigned t = threadIdx.x;
	s[t] = in[blockIdx.x * 256 + t];
	__syncthreads();
	for (unsigned stride = 128; stride > 0; stride >>= 1) {
		if (t < stride) s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}
`

// anchorSource is the plain C loop the kernel is measured against: the same arithmetic
// over the same arrays, split over the same number of threads with pthreads.
const anchorSource = `
#include <pthread.h>
#include <stddef.h>
struct span { const float* a; const float* b; float* c; size_t lo, hi; };
static void* work(void* p) {
	span* s = (span*)p;
	for (size_t i = s->lo; i < s->hi; i++) s->c[i] = s->a[i] + s->b[i];
	return nullptr;
}
extern "C" __attribute__((visibility("default"))) void vadd_loop(const float* a, const float* b, float* c, size_t n, int threads) {
	pthread_t t[256];
	span s[256];
	if (threads > 256) threads = 256;
	size_t per = (n + threads - 1) / threads;
	for (int i = 0; i < threads; i++) {
		size_t lo = per * i < n ? per * i : n, hi = lo + per < n ? lo + per : n;
		s[i] = span{a, b, c, lo, hi};
		if (i > 0) pthread_create(&t[i], nullptr, work, &s[i]);
	}
	work(&s[0]);
	for (int i = 1; i < threads; i++) pthread_join(t[i], nullptr);
}
`

func benchFunction(b *testing.B, src, name string) *Function {
	img, log, err := NewCompiler(b.TempDir()).Compile(src, "bench.hip", nil, nil)
	require.NoError(b, err, log)
	m, err := Load(img)
	require.NoError(b, err)
	b.Cleanup(func() { m.Close() })
	f, err := m.Function(name)
	require.NoError(b, err)
	return f
}

// buildAnchor compiles anchorSource with the kernels' compiler and flags and returns
// vadd_loop.
func buildAnchor(b *testing.B) func(a, bb, c uintptr, n, threads int) {
	tc, err := findToolchain(b.TempDir())
	require.NoError(b, err)
	dir := b.TempDir()
	src := filepath.Join(dir, "anchor.cpp")
	require.NoError(b, os.WriteFile(src, []byte(anchorSource), 0o644))
	args := append(append(append(append([]string{}, tc.argv[1:]...), baseFlags("-O3")...), extraFlags()...), "-o", filepath.Join(dir, "anchor.so"), src)
	out, err := exec.Command(tc.argv[0], args...).CombinedOutput()
	require.NoError(b, err, string(out))
	h, why := openObject(filepath.Join(dir, "anchor.so"))
	require.NotNil(b, h, why)
	fn := lookup(h, "vadd_loop")
	require.NotNil(b, fn)
	return func(a, bb, c uintptr, n, threads int) { hostmem.CallVAdd(fn, a, bb, c, n, threads) }
}

// BenchmarkCPUVectorAdd: c[i] = a[i] + b[i] over three 64 MiB float arrays, through
// Launch and through the plain C loop, alternating in each iteration. GB/s counts the
// three arrays' bytes (two read, one written) per run.
func BenchmarkCPUVectorAdd(b *testing.B) { benchVectorAdd(b, "vadd") }

// BenchmarkCPUVectorAddUnsigned: the same with an unsigned index, as CubeCL writes it. No
// budget: GCC 12 cannot split its bounds check out of the thread loop, so it streams
// through masked vectors (about 0.65 of the C loop; cubehip_entry.h, threads).
func BenchmarkCPUVectorAddUnsigned(b *testing.B) { benchVectorAdd(b, "vadd_u") }

func benchVectorAdd(b *testing.B, entry string) {
	const n = 16 << 20 // 64 MiB of float32
	f := benchFunction(b, benchKernels, entry)
	anchor := buildAnchor(b)
	threads := poolThreads()
	mem := make([]uintptr, 3)
	for i := range mem {
		mem[i] = hostmem.Alloc(n * 4)
		require.NotZero(b, mem[i])
		defer hostmem.Free(mem[i])
	}
	a, bb := hostmem.Slice[float32](mem[0], n), hostmem.Slice[float32](mem[1], n)
	for i := range n {
		a[i], bb[i] = float32(i), 1
	}
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(mem[0])).Ptr(hipsys.DevicePtr(mem[1])).Ptr(hipsys.DevicePtr(mem[2])).I32(n)
	grid, block := hipsys.Dim3{X: n / 256, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}
	// Warm both: first touch of c's pages and the pool's start are not what is measured.
	require.NoError(b, f.Launch(grid, block, 0, args.Buffer(), args.Offsets()))
	anchor(mem[0], mem[1], mem[2], n, threads)

	var kernel, loop time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := f.Launch(grid, block, 0, args.Buffer(), args.Offsets()); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		anchor(mem[0], mem[1], mem[2], n, threads)
		loop += time.Since(t1)
		kernel += t1.Sub(t0)
	}
	bytes := float64(3*n*4) * float64(b.N)
	kgbs, lgbs := bytes/kernel.Seconds()/1e9, bytes/loop.Seconds()/1e9
	b.ReportMetric(kgbs, "kernel-GB/s")
	b.ReportMetric(lgbs, "c-loop-GB/s")
	b.ReportMetric(kgbs/lgbs, "ratio")
	b.ReportMetric(float64(threads), "threads")
}

// BenchmarkLaunchEmpty: one block of one thread of an empty kernel, which runs inline on
// the calling goroutine's thread.
func BenchmarkLaunchEmpty(b *testing.B) {
	f := benchFunction(b, benchKernels, "empty")
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Launch(one, one, 0, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "µs/launch")
}

// BenchmarkBarrierReduce: a 256-thread tree reduction with 9 barriers per block, run as
// fibers (CUBEHIP_CPU_REGIONS=0: the jit would make it regions); ns per thread-barrier is
// what one fiber switch (there and back) costs.
func BenchmarkBarrierReduce(b *testing.B) {
	b.Setenv("CUBEHIP_CPU_REGIONS", "0")
	const blocks = 4096
	f := benchFunction(b, benchBarrierKernels, "reduce")
	in, out := hostmem.Alloc(blocks*256*4), hostmem.Alloc(blocks*4)
	defer hostmem.Free(in)
	defer hostmem.Free(out)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(in)).Ptr(hipsys.DevicePtr(out))
	grid, block := hipsys.Dim3{X: blocks, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}
	for b.Loop() {
		if err := f.Launch(grid, block, 0, args.Buffer(), args.Offsets()); err != nil {
			b.Fatal(err)
		}
	}
	switches := float64(blocks) * 256 * 9 * float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())*float64(poolThreads())/switches, "ns/thread-barrier")
}

const benchWarpKernels = `
extern "C" __global__ void reduce_warp(const float* in, float* out) {
	__shared__ float partial[256 / 32];
	unsigned t = threadIdx.x;
	float v = in[blockIdx.x * 256 + t];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	if (t % warpSize == 0) partial[t / warpSize] = v;
	__syncthreads();
	if (t < warpSize) {
		v = t < 256 / warpSize ? partial[t] : 0.0f;
		for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
		if (t == 0) out[blockIdx.x] = v;
	}
}
`

// BenchmarkWarpShuffleReduce: the 256-thread block sum written with warp shuffles (5 per
// lane, one barrier, 5 more in the first warp), timed against the same sum written with
// shared memory and 9 barriers (BenchmarkBarrierReduce's kernel) in the same run, both as
// fibers (the shuffles sit behind a thread-dependent if, which regions leave to the fibers;
// the barrier kernel would be regions): the cost of scheduling fibers warp by warp. Budget:
// ratio (shuffle time / barrier time) at most 2.
func BenchmarkWarpShuffleReduce(b *testing.B) {
	b.Setenv("CUBEHIP_CPU_REGIONS", "0")
	const blocks = 4096
	warp := benchFunction(b, benchWarpKernels, "reduce_warp")
	shared := benchFunction(b, benchBarrierKernels, "reduce")
	in, out := hostmem.Alloc(blocks*256*4), hostmem.Alloc(blocks*4)
	defer hostmem.Free(in)
	defer hostmem.Free(out)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(in)).Ptr(hipsys.DevicePtr(out))
	grid, block := hipsys.Dim3{X: blocks, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}
	var tw, ts time.Duration
	for b.Loop() {
		start := time.Now()
		if err := warp.Launch(grid, block, 0, args.Buffer(), args.Offsets()); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := shared.Launch(grid, block, 0, args.Buffer(), args.Offsets()); err != nil {
			b.Fatal(err)
		}
		tw, ts = tw+mid.Sub(start), ts+time.Since(mid)
	}
	b.ReportMetric(float64(tw.Microseconds())/float64(b.N), "shuffle-µs")
	b.ReportMetric(float64(ts.Microseconds())/float64(b.N), "barrier-µs")
	b.ReportMetric(tw.Seconds()/ts.Seconds(), "ratio")
}

// fullLibrarySource uses every part of the device library a real kernel might: half
// precision, cooperative groups, warp shuffles, math, atomics and printf.
const fullLibrarySource = `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* in, float* out, unsigned* count, int n) {
	cg::thread_block b = cg::this_thread_block();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = i < n ? in[i] : 0.0f;
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	b.sync();
	half h = v;
	if (i == 0) printf("%f\n", (double)v);
	atomicAdd(count, 1);
	if (i < n) out[i] = float(h) + erfinvf(0.5f) + sinpif(v);
}
`

// BenchmarkFirstCompile: a kernel using the whole device library, compiled with an empty
// object cache (the compiler runs every time): "prelude" parses the prelude (no
// precompiled one, as the first compile on a machine does), "precompiled" loads the
// prelude precompiled by an earlier compile. Budget: under 1 s.
func BenchmarkFirstCompile(b *testing.B) {
	compile := func(b *testing.B) {
		img, log, err := NewCompiler(b.TempDir()).Compile(fullLibrarySource, "full.hip", nil, nil)
		require.NoError(b, err, log)
		require.NotEmpty(b, img)
	}
	b.Run("prelude", func(b *testing.B) {
		b.Setenv("CUBEHIP_CPU_PCH", "0")
		for b.Loop() {
			compile(b)
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/compile")
	})
	b.Run("precompiled", func(b *testing.B) {
		b.Setenv("CUBEHIP_CACHE_DIR", b.TempDir())
		compile(b) // starts the precompiled prelude's build
		pattern := filepath.Join(DefaultCacheDir(), layoutVersion, "pch", "[0-9a-f]*", pchHeader+".gch")
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			if m, _ := filepath.Glob(pattern); len(m) > 0 {
				break
			}
			require.True(b, time.Now().Before(deadline), "no precompiled prelude")
		}
		b.ResetTimer()
		for b.Loop() {
			compile(b)
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/compile")
	})
}
