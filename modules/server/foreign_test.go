package server_test

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// hostFloat is the float32 at a pinned host address.
func hostFloat(p hipsys.HostPtr) float32 {
	b := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), 4)
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// A Sync with a buffer covers the work that writes it on another stream: x, homed on
// stream 0, is written by a long kernel on stream 3, and once stream 0's Sync(x)
// returns its bytes are the kernel's (looked at through the cpu device's host memory,
// where nothing else orders the look).
func TestSyncWithABufferCoversItsWriteOnAnotherStream(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	if d.Platform() != "cpu" {
		t.Skipf("the %s platform's device memory is not host memory", d.Platform())
	}
	busy, n, _ := busyStream(t, d)
	x := upload(t, d.Stream, 0)
	require.NoError(t, d.Sync())
	ptr, err := x.DevicePointer()
	require.NoError(t, err)
	require.NoError(t, busy.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, x.Arg(), server.U64(n)))
	require.NoError(t, d.Sync(x))
	assert.Equal(t, floatBytes(spun(n)), hostView(ptr, 4), "Sync(x) returned before the write of x on stream 3 was done")
}

// On the cpu platform OrderBefore(0) is a host wait covering the buffer's writes on
// every stream; other streams' handles and the import side are refused, naming why.
func TestOrderBeforeOnTheCPUPlatform(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	if d.Platform() != "cpu" {
		t.Skipf("the %s platform orders on the device: TestOrderBeforeForeignStream", d.Platform())
	}
	busy, n, _ := busyStream(t, d)
	x := upload(t, d.Stream, 0)
	require.NoError(t, d.Sync())
	ptr, err := x.DevicePointer()
	require.NoError(t, err)
	require.NoError(t, busy.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, x.Arg(), server.U64(n)))
	require.NoError(t, x.OrderBefore(0))
	assert.Equal(t, floatBytes(spun(n)), hostView(ptr, 4))

	err = x.OrderBefore(7)
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorContains(t, err, "no streams of other libraries")
	assert.ErrorIs(t, d.Stream.WaitForeign(7), server.ErrInvalidArgument)
	_, err = d.ExportStream()
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
}

// A buffer whose last write failed is never handed over: OrderBefore returns the
// failure (on every platform), and a released or foreign buffer is refused.
func TestOrderBeforeRefusesAFailedBuffer(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	in := upload(t, d.Stream, 1, 2, 3, 4)
	out := alloc(t, d.Stream, 16)
	require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	_ = d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
	assert.ErrorIs(t, out.OrderBefore(0), hipsys.ErrorLaunchFailure)

	require.NoError(t, in.Release())
	assert.ErrorIs(t, in.OrderBefore(0), server.ErrReleased)
	var nobody *server.Buffer
	assert.ErrorIs(t, nobody.OrderBefore(0), server.ErrInvalidArgument)
}

// foreignStream is a stream the Device did not make, standing for another library's
// (CuPy's, PyTorch's), and pinned host memory to copy into on it.
func foreignStream(t *testing.T, p hipsys.Platform) (hipsys.Stream, hipsys.HostPtr) {
	t.Helper()
	theirs, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.StreamDestroy(theirs) })
	host, err := p.HostMalloc(4, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.HostFree(host) })
	return theirs, host
}

// OrderBefore hands a buffer to another library's stream on the device: x, homed on
// stream 0, is written by a long kernel on stream 3; after x.OrderBefore(theirs), a
// copy the other library queues on its stream reads the kernel's value, though the
// call returned while the kernel still ran. ExportStream, the same through the
// Device's own export stream. (On the cpu platform through foreignCPU.)
func TestOrderBeforeForeignStream(t *testing.T) {
	d, f := openForeignDevice(t, server.Options{})
	p := f.Unwrap()
	busy, n, _ := busyStream(t, d)
	theirs, host := foreignStream(t, p)
	exported, err := d.ExportStream()
	require.NoError(t, err)
	again, err := d.ExportStream()
	require.NoError(t, err)
	assert.Equal(t, exported, again, "one export stream for the Device's life")

	for _, c := range []struct {
		name string
		to   hipsys.Stream
	}{{"theirs", theirs}, {"export stream", hipsys.Stream(exported)}} {
		t.Run(c.name, func(t *testing.T) {
			x := upload(t, d.Stream, 0)
			require.NoError(t, d.Sync())
			ptr, err := x.DevicePointer()
			require.NoError(t, err)
			require.NoError(t, busy.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, x.Arg(), server.U64(n)))
			require.NoError(t, x.OrderBefore(uint64(c.to)))
			require.NoError(t, p.MemcpyDtoHAsync(host, ptr, 4, c.to))
			require.NoError(t, p.StreamSynchronize(c.to))
			assert.Equal(t, spun(n), hostFloat(host), "the other library's copy ran before the write it was ordered after")
		})
	}
}

// An export of a buffer whose writes the Device knows complete (a Sync saw its stream
// drained) queues nothing on the other library's stream: there is nothing to wait for.
// One written since, by work still running, is ordered (TestOrderBeforeForeignStream).
func TestOrderBeforeOfFinishedWorkQueuesNothing(t *testing.T) {
	d, f := openForeignDevice(t, server.Options{})
	theirs, _ := foreignStream(t, f.Unwrap())
	x := upload(t, d.Stream, 1, 2, 3, 4)
	require.NoError(t, d.Sync())
	records, waits := f.Calls("hipEventRecord"), f.Calls("hipStreamWaitEvent")
	require.NoError(t, x.OrderBefore(uint64(theirs)))
	assert.Equal(t, records, f.Calls("hipEventRecord"), "an event recorded for finished work")
	assert.Equal(t, waits, f.Calls("hipStreamWaitEvent"), "a wait queued for finished work")
}

// WaitForeign orders the other library's writes before the Device's stream: a long
// memset on their stream, then their write of y, then the Device's stream made to wait;
// a Read right after (a small read, on a stream the Device had just synchronized) sees
// their bytes.
func TestWaitForeignOrdersTheirWritesFirst(t *testing.T) {
	d, f := openForeignDevice(t, server.Options{})
	p := f.Unwrap()
	theirs, _ := foreignStream(t, p)
	y := upload(t, d.Stream, 1, 2, 3, 4)
	require.NoError(t, d.Sync(), "the Device now believes its stream idle")
	ptr, err := y.DevicePointer()
	require.NoError(t, err)
	const long = 256 << 20
	scratch, err := p.Malloc(long)
	require.NoError(t, err)
	defer p.Free(scratch)
	require.NoError(t, p.MemsetAsync(scratch, 0, long, theirs))
	require.NoError(t, p.MemsetAsync(ptr, 0x3f, 16, theirs))
	require.NoError(t, d.Stream.WaitForeign(uint64(theirs)))
	got, err := d.Read(y)
	require.NoError(t, err)
	want := make([]byte, 16)
	for i := range want {
		want[i] = 0x3f
	}
	assert.Equal(t, want, got, "the read is ordered after their write")
}

// Once a stream's native handle is out, a launch is on the stream when Launch returns:
// a copy queued on the handle right after it reads what the kernel wrote. The copy here
// goes through the platform the Device uses, whose calls settle its launch queue first,
// so on nvidia this holds with or without the queue: the race with a library that calls
// the driver itself is the Python suite's test with CuPy
// (test_shared_stream_launch_is_on_the_stream_when_the_call_returns). (On the cpu
// platform through foreignCPU.)
func TestSharedStreamLaunchIsOnTheStreamWhenLaunchReturns(t *testing.T) {
	d, f := openForeignDevice(t, server.Options{})
	p := f.Unwrap()
	s := d.On(2)
	native, err := s.NativeHandle()
	require.NoError(t, err)
	_, host := foreignStream(t, p)
	out := alloc(t, s, 4)
	ptr, err := out.DevicePointer()
	require.NoError(t, err)
	require.NoError(t, d.Compile(devSpin))
	for i := range 300 {
		require.NoError(t, s.Write(out, make([]byte, 4)))
		n := uint64(100 + i)
		require.NoError(t, s.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n)))
		require.NoError(t, p.MemcpyDtoHAsync(host, ptr, 4, hipsys.Stream(native)))
		require.NoError(t, p.StreamSynchronize(hipsys.Stream(native)))
		require.Equal(t, spun(n), hostFloat(host), "round %d: the other library's copy ran before the launch", i)
	}
}
