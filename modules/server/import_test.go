package server_test

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// foreign is device memory the Device did not allocate: a raw allocation of the
// platform under it, as CuPy's or PyTorch's allocator makes one. It is freed when the
// test ends, after the Device is closed (cleanups run last-registered first, and
// openDevice registered the Close before).
func foreign(t *testing.T, f *faults.Platform, d *server.Device, size uint64) hipsys.DevicePtr {
	t.Helper()
	require.NoError(t, f.SetDevice(d.Index()))
	ptr, err := f.Malloc(size)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, d.Close())
		assert.NoError(t, f.Free(ptr))
	})
	return ptr
}

// counter is a release that counts its calls.
type counter struct{ n atomic.Int32 }

func (c *counter) release() { c.n.Add(1) }

// waitCount waits (the release runs on a goroutine of the Device's) until c reaches
// want, and checks that it stays there.
func waitCount(t *testing.T, c *counter, want int32) {
	t.Helper()
	assert.Eventually(t, func() bool { return c.n.Load() >= want }, 5*time.Second, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	assert.Equal(t, want, c.n.Load(), "the release runs exactly once")
}

// TestImport: an imported buffer is the owner's memory, both ways round, in reads,
// writes, launches, views and copies; it is not counted in the pools' usage; and its
// release runs once, after Release.
func TestImport(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 64)
	usage, err := d.MemoryUsage()
	require.NoError(t, err)

	var c counter
	b, err := d.Import(ptr, 16, c.release)
	require.NoError(t, err)
	assert.Equal(t, uint64(16), b.Size())
	got, err := b.DevicePointer()
	require.NoError(t, err)
	assert.Equal(t, ptr, got)
	after, err := d.MemoryUsage()
	require.NoError(t, err)
	assert.Equal(t, usage, after, "imported memory is not the pools'")

	// The owner writes; the Device reads it in place, launches on it, and the owner sees it.
	require.NoError(t, f.MemcpyHtoD(ptr, floatBytes(1, 2, 3, 4)))
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, b))
	require.NoError(t, d.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(4)}}))
	require.NoError(t, d.Sync(b))
	raw := make([]byte, 16)
	require.NoError(t, f.MemcpyDtoH(raw, ptr))
	assert.Equal(t, floatBytes(2, 3, 4, 5), raw)

	// A view, and copies both ways between imported and allocated buffers.
	out := alloc(t, d.Stream, 8)
	require.NoError(t, d.Call(devScale, grid(2), b.View(8, 8).Arg(), out.Arg(), server.F32(10), server.U32(2)))
	assert.Equal(t, []float32{40, 50}, readFloats(t, d.Stream, out))
	require.NoError(t, d.CopyFrom(b, upload(t, d.Stream, 7, 7, 7, 7)))
	require.NoError(t, d.Write(b, floatBytes(9)))
	require.NoError(t, d.Sync(b))
	require.NoError(t, f.MemcpyDtoH(raw, ptr))
	assert.Equal(t, floatBytes(9, 7, 7, 7), raw)

	assert.Zero(t, c.n.Load(), "nothing released while the buffer is held")
	require.NoError(t, b.Release())
	waitCount(t, &c, 1)
	assert.ErrorIs(t, b.Release(), server.ErrReleased)
	_, err = d.Read(b)
	assert.ErrorIs(t, err, server.ErrReleased)
	waitCount(t, &c, 1)
}

// TestImportGraph: a graph that recorded work on an imported buffer keeps it: the
// release waits for the graph's Destroy, and replays keep using the owner's memory.
func TestImportGraph(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 16)
	require.NoError(t, f.MemcpyHtoD(ptr, floatBytes(0, 0, 0, 0)))
	var c counter
	b, err := d.Import(ptr, 16, c.release)
	require.NoError(t, err)
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(4)}})
	})
	require.NoError(t, err)
	require.NoError(t, b.Release())
	require.NoError(t, g.Replay())
	require.NoError(t, g.Replay())
	require.NoError(t, d.Flush())
	require.NoError(t, d.Stream.Sync())
	time.Sleep(10 * time.Millisecond)
	assert.Zero(t, c.n.Load(), "the graph still holds the buffer")
	raw := make([]byte, 16)
	require.NoError(t, f.MemcpyDtoH(raw, ptr))
	assert.Equal(t, byteFloats(raw)[0], byteFloats(raw)[3])
	assert.GreaterOrEqual(t, byteFloats(raw)[0], float32(2), "the replays ran on the owner's memory")

	require.NoError(t, g.Destroy())
	waitCount(t, &c, 1)
}

// TestImportClose: Close gives back every import still held, and returns after their
// releases did; a Release after Close is a no-op that releases nothing again.
func TestImportClose(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 32)
	var c counter
	b, err := d.Import(ptr, 32, c.release)
	require.NoError(t, err)
	b2, err := d.On(2).Import(ptr, 16, c.release)
	require.NoError(t, err, "two buffers over one memory, on two streams")
	require.NoError(t, d.Close())
	assert.Equal(t, int32(2), c.n.Load(), "released by the time Close returned")
	assert.NoError(t, b.Release())
	assert.NoError(t, b2.Release())
	waitCount(t, &c, 2)
}

// TestImportRefused: bad ranges are errors naming what was wrong, and release is not
// called for them.
func TestImportRefused(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 64)
	var c counter
	for _, tc := range []struct {
		name string
		ptr  hipsys.DevicePtr
		size uint64
		want string
	}{
		{"null", 0, 16, "null pointer"},
		{"no bytes", ptr, 0, "no bytes"},
		{"wraps", ^hipsys.DevicePtr(0) - 7, 64, "past the end of the address space"},
		{"past its allocation", ptr + 32, 1 << 40, "past the end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Import(tc.ptr, tc.size, c.release)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	// Not device memory: Go memory on a GPU; unmapped memory on the cpu device.
	not := hipsys.DevicePtr(4096)
	if d.Platform() != "cpu" {
		host := make([]byte, 64)
		not = hipsys.DevicePtr(uintptr(unsafe.Pointer(&host[0])))
	}
	_, err := d.Import(not, 64, c.release)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.Zero(t, c.n.Load())

	// A failed platform check is injected like any other call's failure.
	require.True(t, f.FailNth("hipImportMemory", 1, hipsys.ErrorInvalidDevice))
	_, err = d.Import(ptr, 16, c.release)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidDevice)
	assert.Zero(t, c.n.Load())
}

// TestImportHostMemory: the cpu device takes host memory it never allocated (a numpy
// array's), and stops taking it once the import is released.
func TestImportHostMemory(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	if d.Platform() != "cpu" {
		t.Skipf("host memory is the cpu device's memory only; the %s platform refuses it (TestImportRefused)", d.Platform())
	}
	mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	ptr := hipsys.DevicePtr(uintptr(unsafe.Pointer(&mem[0])))
	copy(mem, floatBytes(1, 2, 3, 4))

	var c counter
	b, err := d.Import(ptr, 16, c.release)
	require.NoError(t, err)
	require.NoError(t, d.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(4)}}))
	require.NoError(t, d.Sync(b))
	assert.Equal(t, floatBytes(2, 3, 4, 5), mem[:16])
	copy(mem, floatBytes(8))
	assert.Equal(t, []float32{8, 3, 4, 5}, readFloats(t, d.Stream, b))
	require.NoError(t, b.Release())
	waitCount(t, &c, 1)
	assert.Error(t, f.MemcpyHtoD(ptr, []byte{1}), "the platform no longer takes the range")
}

// TestNativeHandle: one handle per device stream, the same on every call, created on
// first use.
func TestNativeHandle(t *testing.T) {
	d, _ := openDevice(t, server.Options{MaxStreams: 4})
	h0, err := d.NativeHandle()
	require.NoError(t, err)
	again, err := d.NativeHandle()
	require.NoError(t, err)
	assert.Equal(t, h0, again)
	h1, err := d.On(1).NativeHandle()
	require.NoError(t, err)
	assert.NotEqual(t, h0, h1)
	h5, err := d.On(5).NativeHandle()
	require.NoError(t, err)
	assert.Equal(t, h1, h5, "stream ids 1 and 5 share a device stream with 4 of them")
	require.NoError(t, d.Close())
	_, err = d.NativeHandle()
	assert.ErrorIs(t, err, server.ErrClosed)
}

// TestImportOtherStream: work of another stream holds an imported buffer as it holds an
// allocated one; once that stream's release worker gave it back (shortly after the work
// is done), a Flush hands the import to its release.
func TestImportOtherStream(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 16)
	require.NoError(t, f.MemcpyHtoD(ptr, floatBytes(1, 1, 1, 1)))
	var c counter
	b, err := d.Import(ptr, 16, c.release)
	require.NoError(t, err)
	s1 := d.On(1)
	require.NoError(t, s1.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(4)}}))
	require.NoError(t, b.Release())
	require.NoError(t, s1.Sync())
	assert.Eventually(t, func() bool {
		require.NoError(t, d.Flush())
		return c.n.Load() > 0
	}, 5*time.Second, time.Millisecond)
	waitCount(t, &c, 1)
	raw := make([]byte, 16)
	require.NoError(t, f.MemcpyDtoH(raw, ptr))
	assert.Equal(t, floatBytes(2, 2, 2, 2), raw, "stream 1's launch ran on the owner's memory")
}

// TestImportCarriesFailure: a failed launch leaves the imported buffer it would have
// written carrying the failure, as an allocated one; the release still runs once.
func TestImportCarriesFailure(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 16)
	var c counter
	b, err := d.Import(ptr, 16, c.release)
	require.NoError(t, err)
	require.NoError(t, d.Compile(devInc))
	require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, d.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(4)}}))
	_, err = d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	_, err = b.DevicePointer()
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	require.NoError(t, b.Release())
	waitCount(t, &c, 1)
}

// TestImportReleasedAfterAnotherStreamsWork: an import whose last use was a long launch
// on another stream is released once that launch is done, with no further call on the
// Device: the stream's release worker gives the buffer back, and the Device's reclaimer
// starts the release (it used to wait for the caller's next Release, Flush,
// MemoryCleanup or Import, so a program that made none kept the memory until Close).
func TestImportReleasedAfterAnotherStreamsWork(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 16)
	require.NoError(t, f.MemcpyHtoD(ptr, floatBytes(1, 1, 1, 1)))
	var c counter
	b, err := d.Import(ptr, 16, c.release)
	require.NoError(t, err)
	s1 := d.On(1)
	busy, n, _ := busyStream(t, d)
	require.NoError(t, busy.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, b.Arg(), server.U64(n/4)))
	require.NoError(t, s1.Launch(devInc, grid(1), server.Args{Buffers: []*server.Buffer{b}, Scalars: []server.Scalar{server.U32(1)}}))
	require.NoError(t, b.Release())
	assert.Zero(t, c.n.Load(), "released while stream 1's launch on it was still queued")
	waitCount(t, &c, 1)
	raw := make([]byte, 4)
	require.NoError(t, f.MemcpyDtoH(raw, ptr))
	assert.Equal(t, floatBytes(spun(n/4)+1), raw, "the release came before the work on the memory was done")
}
