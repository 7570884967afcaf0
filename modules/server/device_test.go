package server_test

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	_ "github.com/cubehip/cubehip/modules/hipsys/platforms"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server"
)

// The Device tests run on the platform hipsys.Open("auto") picks: $CUBEHIP_PLATFORM, else
// amd, nvidia or cpu, whichever has a device. They are the same tests on every platform.

const devSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void dev_scale(const float* in, float* out, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * in[i];
}
extern "C" __global__ void dev_add(const float* x, const float* y, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}
extern "C" __global__ void dev_iota(float* out, const unsigned long long* info) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < info[0]) out[i] = (float)(i * info[1]);
}
extern "C" __global__ void dev_inc(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void dev_empty() {}
`

var (
	devBlock = hipsys.Dim3{X: 64, Y: 1, Z: 1}
	devScale = server.NewKernel(devSource, "dev_scale", devBlock, []server.Access{server.Read, server.Write})
	devAdd   = server.NewKernel(devSource, "dev_add", devBlock, []server.Access{server.Read, server.Read, server.Write})
	devIota  = server.NewKernel(devSource, "dev_iota", devBlock, []server.Access{server.Write})
	devInc   = server.NewKernel(devSource, "dev_inc", devBlock, []server.Access{server.ReadWrite})
	devEmpty = server.NewKernel(devSource, "dev_empty", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil)
)

// openDevice opens the test platform's device 0 behind a fault injector, with the given
// options (Platform and Index are ignored). The device is closed when the test ends.
func openDevice(t testing.TB, opts server.Options) (*server.Device, *faults.Platform) {
	t.Helper()
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	return openDeviceOn(t, p, opts)
}

// openDeviceOn is openDevice on platform p.
func openDeviceOn(t testing.TB, p hipsys.Platform, opts server.Options) (*server.Device, *faults.Platform) {
	t.Helper()
	f := faults.Wrap(p)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	d, err := server.OpenPlatform(f, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		f.Reset()
		assert.NoError(t, d.Close())
	})
	return d, f
}

// grid is enough blocks of devBlock for n threads.
func grid(n int) hipsys.Dim3 { return hipsys.Dim3{X: uint32((n + 63) / 64), Y: 1, Z: 1} }

func floatBytes(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func byteFloats(b []byte) []float32 {
	vs := make([]float32, len(b)/4)
	for i := range vs {
		vs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vs
}

// upload is a new buffer holding vs on s; it is released when the test ends.
func upload(t testing.TB, s server.Stream, vs ...float32) *server.Buffer {
	t.Helper()
	b := alloc(t, s, uint64(4*len(vs)))
	require.NoError(t, s.Write(b, floatBytes(vs...)))
	return b
}

// alloc is a new buffer of size bytes on s; it is released when the test ends (unless
// the test released it: that second release is ErrReleased, which is ignored).
func alloc(t testing.TB, s server.Stream, size uint64) *server.Buffer {
	t.Helper()
	b, err := s.Alloc(size)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Release() })
	return b
}

func readFloats(t testing.TB, s server.Stream, b *server.Buffer) []float32 {
	t.Helper()
	data, err := s.Read(b)
	require.NoError(t, err)
	return byteFloats(data)
}

func TestDeviceOpen(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	assert.NotEmpty(t, d.Platform())
	assert.NotEmpty(t, d.Props().Name)
	assert.Equal(t, 0, d.Index())

	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	_, err = server.OpenPlatform(p, server.Options{Index: 1 << 20})
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	_, err = server.OpenPlatform(nil, server.Options{})
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	_, err = server.Open(server.Options{Platform: "no-such-platform"})
	assert.Error(t, err)
}

func TestDeviceWriteRead(t *testing.T) {
	// A small staging chunk, so that a few hundred KiB already run the pipeline over
	// many chunks, with the ring wrapping around several times.
	d, _ := openDevice(t, server.Options{StagingChunk: 64 << 10, StagingDepth: 3})
	cases := []struct {
		name string
		size int
	}{
		{"one byte", 1},
		{"four bytes", 4},
		{"odd size", 1001},
		{"one chunk", 64 << 10},
		{"chunk and a byte", 64<<10 + 1},
		{"many chunks", 1<<20 + 12345},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := make([]byte, c.size)
			for i := range data {
				data[i] = byte(i*7 + c.size)
			}
			b := alloc(t, d.Stream, uint64(c.size))
			require.NoError(t, d.Write(b, data))
			got, err := d.Read(b)
			require.NoError(t, err)
			assert.Equal(t, data, got)

			// A read of a prefix, into caller memory, on another stream.
			part := make([]byte, c.size/2+1)
			require.NoError(t, d.On(3).ReadInto(part, b))
			assert.Equal(t, data[:len(part)], part)
		})
	}
}

// twoDevices reports a second device that is never used, and counts hipSetDevice.
type twoDevices struct {
	hipsys.Platform
	sets atomic.Int64
}

func (t *twoDevices) GetDeviceCount() (int, error) { return 2, nil }
func (t *twoDevices) SetDevice(d int) error {
	t.sets.Add(1)
	return t.Platform.SetDevice(d)
}

// With several devices every call makes its device current first; with one there is
// no other device to switch from, and no call pays for hipSetDevice.
func TestDeviceSetsItsDeviceOnlyAmongSeveral(t *testing.T) {
	for _, c := range []struct {
		name    string
		several bool
	}{{"one device", false}, {"two devices", true}} {
		t.Run(c.name, func(t *testing.T) {
			p, err := hipsys.Open("auto")
			require.NoError(t, err)
			n, err := p.GetDeviceCount()
			require.NoError(t, err)
			if n != 1 {
				t.Skipf("the platform has %d devices", n)
			}
			counted := &twoDevices{Platform: p}
			var under hipsys.Platform = counted
			if !c.several {
				under = oneDevice{counted}
			}
			d, err := server.OpenPlatform(under, server.Options{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer d.Close()
			b := alloc(t, d.Stream, 16)
			before := counted.sets.Load()
			for range 5 {
				require.NoError(t, d.Write(b, make([]byte, 16)))
				_, err := d.Read(b)
				require.NoError(t, err)
			}
			require.NoError(t, d.Sync())
			if c.several {
				assert.GreaterOrEqual(t, counted.sets.Load()-before, int64(11), "a SetDevice per call")
			} else {
				assert.Zero(t, counted.sets.Load()-before)
			}
		})
	}
}

// oneDevice undoes twoDevices' count, keeping its SetDevice counter.
type oneDevice struct{ *twoDevices }

func (oneDevice) GetDeviceCount() (int, error) { return 1, nil }

// A small read on an idle stream is one blocking copy: the stream is asked whether it is
// idle once, and not again until work is queued on it; work queued in between is waited
// for, its result read.
func TestDeviceSmallReadsAskIdleOnce(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	require.NoError(t, d.Compile(devInc))
	b := upload(t, d.Stream, 1, 2, 3, 4)
	require.NoError(t, d.Sync())
	queries := f.Calls("hipStreamQuery")
	for range 10 {
		assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, b))
	}
	assert.LessOrEqual(t, f.Calls("hipStreamQuery")-queries, 1, "queries for 10 reads of an idle stream")

	for i := range 20 {
		require.NoError(t, d.Launch(devInc, grid(4), server.Args{
			Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(4)},
		}))
		v := float32(i + 1)
		assert.Equal(t, []float32{1 + v, 2 + v, 3 + v, 4 + v}, readFloats(t, d.Stream, b), "read after launch %d", i)
	}
}

func TestDeviceLaunch(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	require.NoError(t, d.Compile(devScale))
	const n = 1000
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	in := upload(t, d.Stream, xs...)
	out := alloc(t, d.Stream, 4*n)
	sum := alloc(t, d.On(1), 4*n)
	iota := alloc(t, d.Stream, 4*n)

	require.NoError(t, d.Launch(devScale, grid(n), server.Args{
		Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(3), server.U32(n)},
	}))
	// On another stream: it waits for out's last write on stream 0.
	require.NoError(t, d.On(1).Launch(devAdd, grid(n), server.Args{
		Buffers: []*server.Buffer{in, out, sum}, Scalars: []server.Scalar{server.U32(n)},
	}))
	require.NoError(t, d.Launch(devIota, grid(n), server.Args{
		Buffers: []*server.Buffer{iota}, Info: []uint64{n, 2},
	}))
	got, sums, iotas := readFloats(t, d.Stream, out), readFloats(t, d.On(1), sum), readFloats(t, d.Stream, iota)
	for i := range n {
		require.Equal(t, 3*xs[i], got[i], "scale %d", i)
		require.Equal(t, 4*xs[i], sums[i], "add %d", i)
		require.Equal(t, float32(2*i), iotas[i], "iota %d", i)
	}
	// A grid of no blocks is refused, and enqueues nothing and changes nothing.
	require.ErrorIs(t, d.Launch(devInc, hipsys.Dim3{}, server.Args{Buffers: []*server.Buffer{out}, Scalars: []server.Scalar{server.U32(n)}}), server.ErrInvalidArgument)
	assert.Equal(t, got, readFloats(t, d.Stream, out))
}

func TestDeviceLaunchDynamic(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	count := alloc(t, d.Stream, 12)
	require.NoError(t, d.Write(count, []byte{2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}))
	x := upload(t, d.Stream, make([]float32, 200)...)
	require.NoError(t, d.LaunchDynamic(devInc, count, server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(200)}}))
	got := readFloats(t, d.Stream, x)
	assert.Equal(t, float32(1), got[127], "two blocks of 64 ran")
	assert.Equal(t, float32(0), got[128], "and no more")
}

func TestDeviceGraph(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	s := d.On(2)
	x := upload(t, s, 0, 0, 0, 0)
	y := alloc(t, s, 16)
	g, err := s.Capture(func(s server.Stream) error {
		if err := s.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}}); err != nil {
			return err
		}
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(10), server.U32(4)}})
	})
	require.NoError(t, err)
	// The warm-up ran once; each replay runs the recorded pair again.
	assert.Equal(t, []float32{1, 1, 1, 1}, readFloats(t, s, x))
	for range 3 {
		require.NoError(t, g.Replay())
	}
	assert.Equal(t, []float32{4, 4, 4, 4}, readFloats(t, s, x))
	assert.Equal(t, []float32{40, 40, 40, 40}, readFloats(t, s, y))

	// Inputs are refreshed by writing them on the graph's stream.
	require.NoError(t, s.Write(x, floatBytes(1, 2, 3, 4)))
	require.NoError(t, g.Replay())
	assert.Equal(t, []float32{20, 30, 40, 50}, readFloats(t, s, y))

	require.NoError(t, g.Destroy())
	assert.ErrorIs(t, g.Destroy(), server.ErrReleased)
	assert.ErrorIs(t, g.Replay(), server.ErrReleased)

	// A failed warm-up ends the window: the stream can capture again.
	boom := errors.New("boom")
	_, err = s.Capture(func(server.Stream) error { return boom })
	assert.ErrorIs(t, err, boom)
	g2, err := s.Capture(func(s server.Stream) error {
		return s.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}})
	})
	require.NoError(t, err)
	require.NoError(t, g2.Destroy())
}

// TestDeviceGraphRecordsWrites captures a host write with the launch that reads it: the
// graph keeps the captured bytes (the Server's staging, not the Device's ring, which is
// reused), so every replay starts again from them.
func TestDeviceGraphRecordsWrites(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := alloc(t, d.Stream, 16)
	g, err := d.Capture(func(s server.Stream) error {
		if err := s.Write(x, floatBytes(5, 6, 7, 8)); err != nil {
			return err
		}
		return s.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}})
	})
	require.NoError(t, err)
	defer g.Destroy()
	// Staging of other copies between replays must not leak into the graph's bytes.
	other := alloc(t, d.Stream, 16)
	for i := range 3 {
		require.NoError(t, d.Write(other, floatBytes(float32(i), 0, 0, 0)))
		require.NoError(t, g.Replay())
		assert.Equal(t, []float32{6, 7, 8, 9}, readFloats(t, d.Stream, x))
	}
}

func TestDeviceProfile(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	x := upload(t, d.Stream, make([]float32, 1<<16)...)
	dur, err := d.Profile(func() error {
		for range 10 {
			if err := d.Launch(devInc, grid(1<<16), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(1 << 16)}}); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, dur)
	assert.Equal(t, float32(10), readFloats(t, d.Stream, x)[123])

	// A failure inside the window invalidates it.
	p, err := d.StartProfile()
	require.NoError(t, err)
	require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, d.Launch(devInc, grid(1<<16), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(1 << 16)}}))
	_, err = p.Stop()
	assert.ErrorIs(t, err, server.ErrProfileInvalidated)
	_, err = p.Stop()
	assert.ErrorIs(t, err, server.ErrReleased)

	q, err := d.StartProfile()
	require.NoError(t, err)
	q.Abandon()
	q.Abandon()
	_, err = q.Stop()
	assert.ErrorIs(t, err, server.ErrReleased)
}

func TestDeviceMemory(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	base, err := d.MemoryUsage()
	require.NoError(t, err)

	b := alloc(t, d.Stream, 1<<20)
	c := alloc(t, d.On(1), 1000)
	u, err := d.MemoryUsage()
	require.NoError(t, err)
	assert.Equal(t, base.NumberAllocs+2, u.NumberAllocs)
	assert.GreaterOrEqual(t, u.BytesInUse, base.BytesInUse+1<<20+1000)

	reports, err := d.MemoryReport()
	require.NoError(t, err)
	assert.Len(t, reports, 2, "streams 0 and 1")

	require.NoError(t, b.Release())
	require.NoError(t, c.Release())
	require.NoError(t, d.Cleanup())
	u, err = d.MemoryUsage()
	require.NoError(t, err)
	assert.Equal(t, base.NumberAllocs, u.NumberAllocs)
	assert.Equal(t, base.BytesInUse, u.BytesInUse)

	// Persistent mode: allocations go to the persistent pool until the window closes.
	s := d.On(1)
	require.NoError(t, s.SetAllocationMode(memory.ModePersistent))
	p := alloc(t, s, 4096)
	require.NoError(t, s.SetAllocationMode(memory.ModeAuto))
	rep, err := s.MemoryReport()
	require.NoError(t, err)
	assert.NotZero(t, rep.Persistent, "the persistent pool holds the allocation")
	require.NoError(t, p.Release())

	// A new pool layout: refused while memory is in use, installed once it is not.
	held := alloc(t, d.Stream, 64)
	assert.ErrorIs(t, d.InstallPools(memory.Layout{Preset: memory.ExclusivePages}), memory.ErrPoolsInUse)
	require.NoError(t, held.Release())
	require.NoError(t, d.InstallPools(memory.Layout{Preset: memory.ExclusivePages}))
	e := upload(t, d.Stream, 1, 2, 3)
	assert.Equal(t, []float32{1, 2, 3}, readFloats(t, d.Stream, e))
}

// TestDeviceUsageBaseline allocates and releases through the Device 100 000 times:
// the pools reuse their slices, and usage ends exactly where it began.
func TestDeviceUsageBaseline(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	keep := alloc(t, d.Stream, 4096) // the stream exists and has a page
	base, err := d.MemoryUsage()
	require.NoError(t, err)
	sizes := []uint64{1, 256, 4096, 1 << 20, 3 << 20}
	for i := range 100_000 {
		b, err := d.Alloc(sizes[i%len(sizes)])
		require.NoError(t, err)
		require.NoError(t, b.Release())
	}
	u, err := d.MemoryUsage()
	require.NoError(t, err)
	assert.Equal(t, base.NumberAllocs, u.NumberAllocs)
	assert.Equal(t, base.BytesInUse, u.BytesInUse)
	require.NoError(t, d.Cleanup())
	u, err = d.MemoryUsage()
	require.NoError(t, err)
	assert.LessOrEqual(t, u.BytesReserved, base.BytesReserved+8<<20, "pages beyond the baseline go back on cleanup")
	_ = keep
}
