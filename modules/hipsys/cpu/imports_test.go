package cpu

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestImportMemory(t *testing.T) {
	p := newTest(t)
	host := make([]byte, 256)
	ptr := hipsys.DevicePtr(uintptr(unsafe.Pointer(&host[0])))

	// Not imported yet: a copy into Go memory is not device memory.
	require.Error(t, p.MemcpyHtoD(ptr, []byte{1}))

	require.NoError(t, p.ImportMemory(ptr, 256))
	require.NoError(t, p.ImportMemory(ptr, 256), "the same range twice: two arrays over one buffer")
	assert.Equal(t, 2, p.Live().Imports)
	require.NoError(t, p.MemcpyHtoD(ptr+16, []byte{7, 8}))
	assert.Equal(t, []byte{7, 8}, host[16:18])
	out := make([]byte, 2)
	require.NoError(t, p.MemcpyDtoH(out, ptr+16))
	assert.Equal(t, []byte{7, 8}, out)
	assert.Error(t, p.MemcpyHtoD(ptr+255, []byte{1, 2}), "past the imported range")

	require.NoError(t, p.ReleaseImportedMemory(ptr, 256))
	require.NoError(t, p.MemcpyHtoD(ptr, []byte{1}), "one import still stands")
	require.NoError(t, p.ReleaseImportedMemory(ptr, 256))
	assert.Equal(t, 0, p.Live().Imports)
	assert.Error(t, p.MemcpyHtoD(ptr, []byte{1}), "every import ended")
	assert.ErrorContains(t, p.ReleaseImportedMemory(ptr, 256), "was not imported")
}

func TestImportMemoryRefusals(t *testing.T) {
	p := newTest(t)
	host := make([]byte, 64)
	ptr := hipsys.DevicePtr(uintptr(unsafe.Pointer(&host[0])))
	dev, err := p.Malloc(1024)
	require.NoError(t, err)
	defer func() { _ = p.Free(dev) }()

	for _, c := range []struct {
		name string
		ptr  hipsys.DevicePtr
		size uint64
		want string
	}{
		{"null", 0, 8, "ptr is null"},
		{"zero size", ptr, 0, "size is 0"},
		{"wraps", ^hipsys.DevicePtr(0) - 3, 16, "runs past the end of the address space"},
		{"unmapped", hipsys.DevicePtr(4096), 4096, "not host memory of this process"},
		{"past a device block", dev + 1000, 100, "runs past the end of the device allocation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := p.ImportMemory(c.ptr, c.size)
			require.Error(t, err)
			assert.Equal(t, hipsys.ErrorInvalidValue, hipsys.StatusOf(err), "%v", err)
			assert.ErrorContains(t, err, c.want)
		})
	}
	// Inside a live block of the current device: accepted, as CuPy memory is on a GPU.
	require.NoError(t, p.ImportMemory(dev+64, 128))
	require.NoError(t, p.ReleaseImportedMemory(dev+64, 128))
	assert.Equal(t, 0, p.Live().Imports)
}
