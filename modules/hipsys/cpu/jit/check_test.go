package jit_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

const overrunSrc = `
extern "C" __global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 2.0f * in[i];
}
`

// region is a buffer of n floats with 64-byte redzones around it, as the cpu platform
// reserves them in a checked device.
func region(t testing.TB, n int) (uintptr, []float32, jit.CheckRegion) {
	raw := hostmem.Alloc(n*4 + 128)
	require.NotZero(t, raw)
	t.Cleanup(func() { hostmem.Free(raw) })
	base := raw + 64
	r := jit.CheckRegion{Lo: uint64(raw), Base: uint64(base), Size: uint64(4 * n), Hi: uint64(base) + uint64(4*n) + 64}
	// As the cpu platform marks its checked blocks for memcheck's inline shadow.
	jit.PoisonBlock(r.Lo, r.Base, r.Size, r.Hi)
	t.Cleanup(func() { jit.ClearShadow(r.Lo, r.Hi) })
	return base, hostmem.Slice[float32](base, n), r
}

// written gives r initcheck's record of its buffer, every byte written, as an upload
// leaves it (and as the cpu platform marks the inline shadow after one).
func written(t testing.TB, r *jit.CheckRegion) {
	rec := hostmem.Alloc(int(r.Size))
	require.NotZero(t, rec)
	t.Cleanup(func() { hostmem.Free(rec) })
	for i := range hostmem.Slice[byte](rec, int(r.Size)) {
		hostmem.Slice[byte](rec, int(r.Size))[i] = 1
	}
	r.Init = rec
	jit.PoisonUnwritten(r.Base, r.Size)
	jit.MarkWritten(r.Base, r.Size, rec, 0, r.Size)
}

func TestCheckedLaunchReportsAnOverrun(t *testing.T) {
	c := jit.NewCompiler(t.TempDir())
	img, log, err := c.Compile(overrunSrc, "overrun.hip", nil, []string{jit.CheckOption(hipsys.CheckMemory)})
	require.NoError(t, err, log)
	m, err := jit.Load(img)
	require.NoError(t, err)
	defer m.Close()
	f, err := m.Function("scale")
	require.NoError(t, err)
	require.True(t, f.Checked())
	pin, in, rin := region(t, 64)
	pout, _, rout := region(t, 64)
	for i := range in {
		in[i] = float32(i)
	}
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout)).I32(64)
	err = f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 128, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout, rin})
	require.Error(t, err)
	var reps *hipsys.CheckReports
	require.True(t, errors.As(err, &reps), "%v", err)
	require.Equal(t, 2, reps.Total, "%v", reps.Reports) // in[64] read and out[64] written by thread 64
	r := reps.Reports[0]
	require.Equal(t, "memcheck", r.Check)
	require.Equal(t, "out of bounds", r.What)
	require.Equal(t, "scale", r.Kernel)
	require.Equal(t, hipsys.Dim3{X: 64}, r.Thread)
	require.Equal(t, "in", r.Param)
	require.Equal(t, int64(256), r.Offset)
	require.Equal(t, uint32(4), r.Size)
	require.False(t, r.Write)
	require.Equal(t, 4, r.Line, "%+v", r)
	w := reps.Reports[1]
	require.True(t, w.Write)
	require.Equal(t, "out", w.Param)
	var herr *hipsys.Error
	require.True(t, errors.As(err, &herr))
	require.Equal(t, hipsys.ErrorIllegalAddress, herr.Status)
	t.Log(err)
}

// checked compiles src under checks and returns its entry.
func checked(t *testing.T, src, entry string, checks hipsys.Checks) *jit.Function {
	t.Helper()
	img, log, err := jit.NewCompiler(t.TempDir()).Compile(src, "checked.hip", nil, []string{jit.CheckOption(checks)})
	require.NoError(t, err, log)
	m, err := jit.Load(img)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	f, err := m.Function(entry)
	require.NoError(t, err)
	return f
}

func reportsOf(t *testing.T, err error) *hipsys.CheckReports {
	t.Helper()
	var reps *hipsys.CheckReports
	require.True(t, errors.As(err, &reps), "not a check report: %v", err)
	return reps
}

// The fixed twin of the overrun runs clean and computes what it should.
func TestCheckedLaunchOfCorrectCodeIsClean(t *testing.T) {
	f := checked(t, `
extern "C" __global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}`, "scale", hipsys.CheckMemory|hipsys.CheckSync)
	pin, in, rin := region(t, 100)
	pout, out, rout := region(t, 100)
	for i := range in {
		in[i] = float32(i)
	}
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout)).I32(100)
	require.NoError(t, f.LaunchChecked(hipsys.Dim3{X: 4, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout}))
	for i := range out {
		require.Equal(t, float32(2*i), out[i])
	}
}

func TestCheckedMisalignedVectorAccess(t *testing.T) {
	f := checked(t, `
extern "C" __global__ void copy4(const char* in, float4* out) {
  const float4* v = reinterpret_cast<const float4*>(in + 4);
  out[threadIdx.x] = v[threadIdx.x];
}`, "copy4", hipsys.CheckMemory)
	pin, _, rin := region(t, 64)
	pout, _, rout := region(t, 64)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout))
	err := f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 2, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout})
	reps := reportsOf(t, err)
	r := reps.Reports[0]
	require.Equal(t, "misaligned", r.What, "%v", reps)
	require.Equal(t, "in", r.Param)
	require.Equal(t, int64(4), r.Offset)
	require.Equal(t, uint32(16), r.Size)
}

func TestCheckedBarrierInABranch(t *testing.T) {
	const src = `
extern "C" __global__ void tail(float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = t;
  if (t < 32) {
    __syncthreads();
    out[t] = s[63 - t];
  }
}`
	f := checked(t, src, "tail", hipsys.CheckSync)
	pout, _, rout := region(t, 64)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pout))
	err := f.LaunchChecked(hipsys.Dim3{X: 2, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout})
	reps := reportsOf(t, err)
	r := reps.Reports[0]
	require.Equal(t, "synccheck", r.Check, "%v", reps)
	require.Equal(t, 7, r.Line, "%v", r)
	require.Equal(t, uint32(32), r.OtherThread.X, "%v", r) // the first thread that skipped it
	require.Equal(t, 2, reps.Total, "one report per block: %v", reps.Reports)
	var herr *hipsys.Error
	require.True(t, errors.As(err, &herr))
	require.Equal(t, hipsys.ErrorLaunchFailure, herr.Status)

	// Two barriers on two paths.
	f = checked(t, `
extern "C" __global__ void split(float* out) {
  int t = threadIdx.x;
  if (t % 2) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[t] = t;
}`, "split", hipsys.CheckSync)
	err = f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout})
	r = reportsOf(t, err).Reports[0]
	require.Contains(t, r.What, "divergent")
	require.Equal(t, 7, r.Line, "%v", r)
	require.Equal(t, 5, r.OtherLine, "%v", r)
	require.Equal(t, uint32(1), r.OtherThread.X)
}

const reduceRace = `
extern "C" __global__ void reduce(const float* in, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}`

// racecheck: the reduction whose loop lost its barrier is reported with both threads and
// both lines; with the barrier back it runs clean and sums right.
func TestCheckedSharedRace(t *testing.T) {
	f := checked(t, reduceRace, "reduce", hipsys.CheckRace|hipsys.CheckMemory)
	pin, in, rin := region(t, 128)
	pout, out, rout := region(t, 2)
	for i := range in {
		in[i] = 1
	}
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout))
	run := func(f *jit.Function) error {
		return f.LaunchChecked(hipsys.Dim3{X: 2, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout})
	}
	reps := reportsOf(t, run(f))
	r := reps.Reports[0]
	require.Equal(t, "racecheck", r.Check, "%v", reps)
	require.Equal(t, "s", r.Shared)
	require.Equal(t, 8, r.Line, "%v", r)
	require.Equal(t, 8, r.OtherLine, "%v", r)
	require.NotEqual(t, r.Thread, r.OtherThread)

	fixed := checked(t, strings.Replace(reduceRace, "s[t + k];\n  }", "s[t + k];\n    __syncthreads();\n  }", 1), "reduce", hipsys.CheckRace|hipsys.CheckMemory|hipsys.CheckInit)
	require.NoError(t, run(fixed))
	require.Equal(t, []float32{64, 64}, out)
}

// Blocks run one after another on an OS thread keep their shared records apart: a block's
// first region writes what the block before read in its last (no barrier between them,
// yet no race: they are different blocks), and a block reads shared memory only block 0
// wrote (unwritten for every other block). Either goes wrong if a block's start is missed
// (check_block).
func TestCheckedBlocksApart(t *testing.T) {
	const src = `
extern "C" __global__ void mirror(float* out, int writers) {
  __shared__ float s[64];
  int t = threadIdx.x;
  if (blockIdx.x < writers) s[t] = t;
  __syncthreads();
  out[blockIdx.x * 64 + t] = s[63 - t];
}`
	const blocks = 64
	pout, out, rout := region(t, blocks*64)
	run := func(f *jit.Function, writers int32) error {
		var args hipsys.KernelArgs
		args.Ptr(hipsys.DevicePtr(pout)).I32(writers)
		return f.LaunchChecked(hipsys.Dim3{X: blocks, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout})
	}
	race := checked(t, src, "mirror", hipsys.CheckRace)
	require.NoError(t, run(race, blocks))
	require.Equal(t, float32(63), out[64*blocks-64])

	for _, c := range []hipsys.Checks{hipsys.CheckInit, hipsys.CheckInit | hipsys.CheckRace} {
		f := checked(t, src, "mirror", c)
		reps := reportsOf(t, run(f, 1))
		r := reps.Reports[0]
		require.Equal(t, "initcheck", r.Check, "%v", reps)
		require.Equal(t, "s", r.Shared)
		require.NotEqual(t, uint32(0), r.Block.X, "block 0 wrote what it read")
		require.Equal(t, 64*(blocks-1), reps.Total, "every thread of every other block reads one unwritten float")
	}
}

// memcheck and initcheck of shared memory: past the block's shared memory, and a read of
// shared memory no thread of the block wrote, each naming the variable.
func TestCheckedSharedBoundsAndInit(t *testing.T) {
	f := checked(t, `
extern "C" __global__ void tile(float* out, int k) {
  __shared__ float a[32];
  __shared__ float b[32];
  int t = threadIdx.x;
  a[t] = t;
  __syncthreads();
  out[t] = a[t] + b[(t + k) % 32] + a[t + k];
}`, "tile", hipsys.CheckMemory|hipsys.CheckInit)
	pout, _, rout := region(t, 32)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pout)).I32(0)
	reps := reportsOf(t, f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout}))
	r := reps.Reports[0]
	require.Equal(t, "initcheck", r.Check, "%v", reps)
	require.Equal(t, "b", r.Shared)
	require.Equal(t, 8, r.Line)
	require.Equal(t, 32, reps.Total, "each thread reads one unwritten float of b")
}

// Implicit warp-synchronous code, which an unchecked compile refuses, runs under racecheck
// and is reported as the race it is on a GPU without lockstep.
func TestCheckedWarpSynchronousCode(t *testing.T) {
	const src = `
extern "C" __global__ void warpsum(const float* in, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  if (t < 32) {
    volatile float* v = s;
    v[t] += v[t + 32];
    v[t] += v[t + 16];
    v[t] += v[t + 8];
  }
  if (t == 0) out[0] = s[0];
}`
	_, _, err := jit.NewCompiler(t.TempDir()).Compile(src, "warpsum.hip", nil, nil)
	require.ErrorContains(t, err, "implicit warp-synchronous code")
	f := checked(t, src, "warpsum", hipsys.CheckRace)
	pin, _, rin := region(t, 64)
	pout, _, rout := region(t, 1)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout))
	reps := reportsOf(t, f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout}))
	r := reps.Reports[0]
	require.Equal(t, "racecheck", r.Check, "%v", reps)
	require.Equal(t, "s", r.Shared)
	require.Contains(t, []int{9, 10, 11}, r.Line, "%v", r)
	require.Contains(t, []int{9, 10, 11}, r.OtherLine, "%v", r)
}

// memcheck reads the inline shadow: a read one float past a static __shared__
// array, inside the page the arena made read-write for it, and one past the dynamic
// buffer (whose end is the arena's guard page: reported, then faulting) are reported with
// the thread, the variable, the offset and the line; the fixed twin is clean.
func TestInlineMemcheckSharedBounds(t *testing.T) {
	const src = `
extern "C" __global__ void edges(float* out, int k, int j) {
  __shared__ float a[32];
  extern __shared__ float d[];
  int t = threadIdx.x;
  a[t] = t;
  d[t] = 2 * t;
  __syncthreads();
  out[t] = a[t + k] + d[t + j];
}`
	f := checked(t, src, "edges", hipsys.CheckMemory)
	pout, out, rout := region(t, 32)
	run := func(k, j int32) error {
		var args hipsys.KernelArgs
		args.Ptr(hipsys.DevicePtr(pout)).I32(k).I32(j)
		return f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 32*4, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout})
	}
	require.NoError(t, run(0, 0))
	for i := range out {
		require.Equal(t, float32(3*i), out[i])
	}
	for _, c := range []struct {
		k, j   int32
		shared string
	}{{1, 0, "a"}, {0, 1, "extern __shared__"}} {
		reps := reportsOf(t, run(c.k, c.j))
		require.Equal(t, 1, reps.Total, "%v", reps.Reports)
		r := reps.Reports[0]
		require.Equal(t, "memcheck", r.Check)
		require.Equal(t, "shared memory out of bounds", r.What)
		require.Equal(t, c.shared, r.Shared)
		require.Equal(t, int64(128), r.Offset)
		require.Equal(t, uint32(31), r.Thread.X)
		require.Equal(t, 9, r.Line, "%+v", r)
	}
}

// Two checked modules marking the same OS thread's arena for different windows: each
// launch finds the marks another module left and marks its own, so a read past the
// smaller array is reported after the larger one's kernel ran on that thread.
func TestInlineMemcheckArenaMarksAcrossModules(t *testing.T) {
	runtime.LockOSThread() // one-block launches run on the calling thread: the same arena
	defer runtime.UnlockOSThread()
	const src = `
extern "C" __global__ void edge(float* out, int k) {
  __shared__ float a[N];
  int t = threadIdx.x;
  a[t] = t;
  __syncthreads();
  out[t] = a[t + k];
}`
	small := checked(t, strings.Replace(src, "[N]", "[32]", 1), "edge", hipsys.CheckMemory)
	large := checked(t, strings.Replace(src, "[N]", "[64]", 1), "edge", hipsys.CheckMemory)
	pout, _, rout := region(t, 64)
	run := func(f *jit.Function, threads uint32, k int32) error {
		var args hipsys.KernelArgs
		args.Ptr(hipsys.DevicePtr(pout)).I32(k)
		return f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: threads, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rout})
	}
	for range 4 {
		require.NoError(t, run(small, 32, 0))
		require.NoError(t, run(large, 64, 0))
		reps := reportsOf(t, run(small, 32, 1))
		require.Equal(t, 1, reps.Total, "%v", reps.Reports)
		require.Equal(t, "a", reps.Reports[0].Shared)
		require.Equal(t, int64(128), reps.Reports[0].Offset)
	}
}

// Barrier kernels run as regions under synccheck and racecheck too (their barriers are
// where one thread loop ends): a thread that returned before a barrier the others reach
// is reported with the barrier's line, a race between two threads of one region with
// both, and atomics on shared memory stay atomic (no race); the fixed twins run clean.
func TestCheckedRegions(t *testing.T) {
	const early = `
extern "C" __global__ void early(const float* in, float* out, int n) {
  __shared__ float s[64];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = in[t];
  __syncthreads();
  out[t] = s[n - 1 - t];
}`
	f := checked(t, early, "early", hipsys.CheckSync)
	pin, in, rin := region(t, 64)
	pout, out, rout := region(t, 64)
	for i := range in {
		in[i] = float32(i)
	}
	run := func(f *jit.Function, n int32) error {
		var args hipsys.KernelArgs
		args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout)).I32(n)
		return f.LaunchChecked(hipsys.Dim3{X: 2, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout})
	}
	require.NoError(t, run(f, 64), "no thread returns")
	reps := reportsOf(t, run(f, 48))
	r := reps.Reports[0]
	require.Equal(t, "synccheck", r.Check, "%v", reps)
	require.Equal(t, 7, r.Line, "%+v", r)
	require.Equal(t, uint32(0), r.Thread.X)
	require.Equal(t, uint32(48), r.OtherThread.X, "the first thread that returned")
	require.Equal(t, 2, reps.Total, "one report per block: %v", reps.Reports)

	const hist = `
extern "C" __global__ void hist(const float* in, float* out) {
  __shared__ float bins[4];
  int t = threadIdx.x;
  if (t < 4) bins[t] = 0;
  __syncthreads();
  atomicAdd(&bins[t % 4], in[t]);
  __syncthreads();
  if (t < 4) out[t] = bins[t];
}`
	h := checked(t, hist, "hist", hipsys.CheckRace|hipsys.CheckSync)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout))
	require.NoError(t, h.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout}))
	for b := range 4 {
		want := float32(0)
		for i := b; i < 64; i += 4 {
			want += float32(i)
		}
		require.Equal(t, want, out[b])
	}
	// A plain update in place of the atomic races between the threads of one region.
	racy := checked(t, strings.Replace(hist, "atomicAdd(&bins[t % 4], in[t]);", "bins[t % 4] += in[t];", 1), "hist", hipsys.CheckRace)
	reps = reportsOf(t, racy.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout}))
	require.Equal(t, "racecheck", reps.Reports[0].Check, "%v", reps)
	require.Equal(t, "bins", reps.Reports[0].Shared)
}

// memcheck judges a thread's local arrays too: an index past one is reported with the
// thread and the line (its redzone marked by the kernel's own frame); the fixed twin is
// clean, and so is a kernel run on the same stack after one whose trap cut its frame
// short, its redzones still marked (fault.c clears them; a later frame's prologue also
// rewrites the marks of its own variables).
func TestInlineMemcheckLocalArrays(t *testing.T) {
	runtime.LockOSThread() // one-block launches run on the calling thread: the same stack
	defer runtime.UnlockOSThread()
	const src = `
extern "C" __global__ void local(const float* in, float* out, int k) {
  float a[16];
  for (int i = 0; i < 16; i++) a[i] = in[i] * threadIdx.x;
  out[threadIdx.x] = a[(threadIdx.x + k) % 17];
}
extern "C" __global__ void deep(const float* in, float* out) {
  volatile float b[256];
  for (int i = 0; i < 256; i++) b[i] = in[i % 16];
  float s = 0;
  for (int i = 0; i < 256; i++) s += b[i];
  out[threadIdx.x] = s;
}
extern "C" __global__ void cut(const float* in, float* out) {
  volatile float c[40];
  for (int i = 0; i < 40; i++) c[i] = in[i % 16];
  if (c[3] == in[3]) __trap();
  out[threadIdx.x] = c[5];
}`
	f := checked(t, src, "local", hipsys.CheckMemory)
	pin, in, rin := region(t, 64)
	pout, _, rout := region(t, 64)
	for i := range in {
		in[i] = 1
	}
	run := func(f *jit.Function, args *hipsys.KernelArgs) error {
		return f.LaunchChecked(hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 16, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets(), false, []jit.CheckRegion{rin, rout})
	}
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout)).I32(0)
	require.NoError(t, run(f, &args), "indices 0 to 15")
	args = hipsys.KernelArgs{}
	args.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout)).I32(1)
	reps := reportsOf(t, run(f, &args))
	require.Equal(t, 1, reps.Total, "thread 15 reads a[16]: %v", reps.Reports)
	r := reps.Reports[0]
	require.Equal(t, "memcheck", r.Check)
	require.Contains(t, r.What, "local array")
	require.Equal(t, uint32(15), r.Thread.X)
	require.Equal(t, 5, r.Line, "%+v", r)

	deep, cut := checked(t, src, "deep", hipsys.CheckMemory), checked(t, src, "cut", hipsys.CheckMemory)
	var two hipsys.KernelArgs
	two.Ptr(hipsys.DevicePtr(pin)).Ptr(hipsys.DevicePtr(pout))
	for range 3 {
		require.Error(t, run(cut, &two), "the trap ends it")
		require.NoError(t, run(deep, &two), "no mark of the cut frame is read as the new one's")
	}
}

// Kernel checks are GCC's instrumentation: a clang toolchain is refused with the way out.
func TestChecksRefuseAClangToolchain(t *testing.T) {
	dir := t.TempDir()
	clang := filepath.Join(dir, "clang++")
	require.NoError(t, os.WriteFile(clang, []byte("#!/bin/sh\necho 'clang version 19.1.7'\n"), 0o755))
	t.Setenv("CXX", clang)
	_, log, err := jit.NewCompiler(t.TempDir()).Compile(overrunSrc, "overrun.hip", nil, []string{jit.CheckOption(hipsys.CheckMemory)})
	require.Error(t, err)
	require.Contains(t, log, "set $CXX to g++")
}
