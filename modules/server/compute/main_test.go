package compute_test

import (
	"encoding/binary"
	"log/slog"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// TestMain keeps the kernel caches (this package's and the cpu compiler's) in one
// temporary directory per run, so tests neither read nor leave a user's cache.
func TestMain(m *testing.M) {
	if os.Getenv(compute.EnvCacheDir) == "" {
		dir, err := os.MkdirTemp("", "cubehip-server-test-")
		if err != nil {
			panic(err)
		}
		os.Setenv(compute.EnvCacheDir, dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// smallProps keeps the cpu device's pools small.
var smallProps = memory.DeviceProps{MemoryTotal: 256 << 20, Alignment: 256}

const kernelSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void add_one(const float* in, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}
extern "C" __global__ void mul_two(const float* in, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0f;
}
extern "C" __global__ void add_one_info(const float* in, float* out, const unsigned long long* info) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < info[0]) out[i] = in[i] + 1.0f;
}
extern "C" __global__ void fill(float* out, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}
`

var (
	addOne     = compute.NewKernel(kernelSource, "add_one", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []compute.Access{compute.Read, compute.Write})
	mulTwo     = compute.NewKernel(kernelSource, "mul_two", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []compute.Access{compute.Read, compute.Write})
	addOneInfo = compute.NewKernel(kernelSource, "add_one_info", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []compute.Access{compute.Read, compute.Write})
	fill       = compute.NewKernel(kernelSource, "fill", hipsys.Dim3{X: 64, Y: 1, Z: 1}, []compute.Access{compute.Write})
)

// env is one test's server over the cpu platform wrapped for fault injection.
type env struct {
	t   testing.TB
	f   *faults.Platform
	srv *compute.Server
	hs  []compute.Handle
}

func newEnv(t testing.TB, opts ...stream.Option) *env {
	t.Helper()
	return newEnvOver(t, func(p hipsys.Platform) hipsys.Platform { return p }, opts...)
}

// newEnvOver is newEnv with the server over wrap(the fault injector).
func newEnvOver(t testing.TB, wrap func(hipsys.Platform) hipsys.Platform, opts ...stream.Option) *env {
	t.Helper()
	return newEnvWith(t, wrap, compute.Config{Stream: opts})
}

// newColdEnv is newEnv with no disk cache of kernels: every kernel it launches first is
// compiled, whatever earlier tests of the process compiled.
func newColdEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, func(p hipsys.Platform) hipsys.Platform { return p }, compute.Config{CacheDir: "-"})
}

func newEnvWith(t testing.TB, wrap func(hipsys.Platform) hipsys.Platform, cfg compute.Config) *env {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	f := faults.Wrap(p)
	cfg.Stream = append([]stream.Option{stream.WithGPUProps(smallProps)}, cfg.Stream...)
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv, err := compute.New(wrap(f), cfg)
	require.NoError(t, err)
	e := &env{t: t, f: f, srv: srv}
	t.Cleanup(func() {
		f.Reset()
		for i := range e.hs {
			_ = e.hs[i].Release()
		}
		for _, id := range srv.StreamIDs() {
			require.NoError(t, srv.Sync(nil, id).Wait())
			_ = srv.MemoryCleanup(id)
			_ = srv.MemoryCleanup(id)
		}
		require.NoError(t, srv.Close())
	})
	return e
}

// floats uploads vs as a new buffer on stream id; the env releases it.
func (e *env) floats(id compute.StreamID, vs ...float32) compute.Binding {
	e.t.Helper()
	h, err := e.srv.Create(f32bytes(vs...), id)
	require.NoError(e.t, err)
	return e.keep(h)
}

// empty is a new n-float buffer on stream id.
func (e *env) empty(id compute.StreamID, n int) compute.Binding {
	e.t.Helper()
	h, err := e.srv.Empty(uint64(4*n), id)
	require.NoError(e.t, err)
	return e.keep(h)
}

func (e *env) keep(h compute.Handle) compute.Binding {
	e.hs = append(e.hs, h)
	b, err := h.Binding()
	require.NoError(e.t, err)
	view := b
	require.NoError(e.t, b.Release())
	return view // uncounted: the handle kept by the env owns the allocation
}

// read reads n floats of b on stream id.
func (e *env) read(id compute.StreamID, b compute.Binding, n int) ([]float32, error) {
	out, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(b, 4*n)}, id).Wait()
	if err != nil {
		return nil, err
	}
	return bytesF32(out[0]), nil
}

func (e *env) mustRead(id compute.StreamID, b compute.Binding, n int) []float32 {
	e.t.Helper()
	v, err := e.read(id, b, n)
	require.NoError(e.t, err)
	return v
}

func launch(t testing.TB, srv *compute.Server, k *compute.Kernel, n uint32, id compute.StreamID, bs ...compute.Binding) {
	t.Helper()
	require.NoError(t, srv.Launch(k, compute.Static(1, 1, 1), &compute.Args{Buffers: bs, Scalars: []compute.Scalar{compute.U32(n)}}, id, compute.Execute))
}

func f32bytes(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	vs := make([]float32, len(b)/4)
	for i := range vs {
		vs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vs
}

func TestLaunchRoundTrip(t *testing.T) {
	e := newEnv(t)
	in := e.floats(0, 1, 2, 3, 4)
	out := e.empty(0, 4)
	launch(t, e.srv, addOne, 4, 0, in, out)
	assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4))
}
