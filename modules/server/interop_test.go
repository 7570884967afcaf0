package server_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// hostView is the n bytes at a device address of the cpu platform, whose device memory
// is host memory. (The address is copied through memory so that the conversion from an
// integer is not one vet has to guess about: the allocation is not Go's.)
func hostView(p hipsys.DevicePtr, n int) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// TestDevicePointer: the exported address names the buffer's own bytes (on the cpu
// device, where they can be looked at from the host, both ways round), stays the same
// for the buffer's life, and two live buffers never share one.
func TestDevicePointer(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	a := upload(t, d.Stream, 1, 2, 3, 4)
	b := alloc(t, d.On(3), 16)

	pa, err := a.DevicePointer()
	require.NoError(t, err)
	pb, err := b.DevicePointer()
	require.NoError(t, err)
	assert.NotZero(t, pa)
	assert.True(t, pa+16 <= pb || pb+16 <= pa, "live buffers overlap: %#x and %#x", pa, pb)
	again, err := a.DevicePointer()
	require.NoError(t, err)
	assert.Equal(t, pa, again, "a live buffer's address never changes")
	assert.Same(t, d, a.Device())

	if d.Platform() != "cpu" {
		t.Skipf("the %s platform's device memory is not host memory: the bytes behind the address are checked on the cpu device", d.Platform())
	}
	require.NoError(t, d.Sync(a))
	assert.Equal(t, floatBytes(1, 2, 3, 4), hostView(pa, 16), "the address is the buffer's memory, written by the Device")

	// Another library writing through the address: the Device reads what it wrote.
	copy(hostView(pa, 16), floatBytes(5, 6, 7, 8))
	assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, d.Stream, a))

	// And the Device's kernels see it in place: dev_inc adds one to each element.
	require.NoError(t, d.Launch(devInc, grid(4), server.Args{Buffers: []*server.Buffer{a}, Scalars: []server.Scalar{server.U32(4)}}))
	require.NoError(t, d.Sync(a))
	assert.Equal(t, floatBytes(6, 7, 8, 9), hostView(pa, 16))
}

func TestDevicePointerRefused(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	released := alloc(t, d.Stream, 16)
	require.NoError(t, released.Release())
	_, err := released.DevicePointer()
	assert.ErrorIs(t, err, server.ErrReleased)

	var none *server.Buffer
	_, err = none.DevicePointer()
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.Nil(t, none.Device())

	// A buffer a failed launch left unwritten gives its failure, not an address of bytes
	// that are not what they should be.
	in := upload(t, d.Stream, 1, 2, 3, 4)
	out := alloc(t, d.Stream, 16)
	require.NoError(t, d.Compile(devScale))
	require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, d.Launch(devScale, grid(4), server.Args{
		Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)},
	}))
	_, err = out.DevicePointer()
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	_, err = in.DevicePointer()
	assert.NoError(t, err, "the launch's input carries nothing")

	// After the device's Close every address went with it.
	other, _ := openDevice(t, server.Options{})
	b := alloc(t, other.Stream, 16)
	require.NoError(t, other.Close())
	_, err = b.DevicePointer()
	assert.ErrorIs(t, err, server.ErrClosed)
}
