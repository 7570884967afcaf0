package conformance

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Device and pinned buffers for the tests, each freed in the test's cleanup, and the
// conversions between Go values and the little-endian bytes every HIP device uses.

// malloc allocates size bytes of device memory for the test.
func (s *suite) malloc(t *testing.T, size uint64) hipsys.DevicePtr {
	t.Helper()
	p, err := s.p.Malloc(size)
	require.NoError(t, err, "hipMalloc(%d)", size)
	require.NotZero(t, p, "hipMalloc(%d)", size)
	t.Cleanup(func() { _ = s.p.Free(p) })
	return p
}

// hostMalloc allocates size bytes of pinned host memory for the test.
func (s *suite) hostMalloc(t *testing.T, size uint64) hipsys.HostPtr {
	t.Helper()
	p, err := s.p.HostMalloc(size, hipsys.HostMallocDefault)
	require.NoError(t, err, "hipHostMalloc(%d)", size)
	require.NotZero(t, p, "hipHostMalloc(%d)", size)
	t.Cleanup(func() { _ = s.p.HostFree(p) })
	return p
}

// upload allocates a device buffer holding data.
func (s *suite) upload(t *testing.T, data []byte) hipsys.DevicePtr {
	t.Helper()
	p := s.malloc(t, uint64(len(data)))
	require.NoError(t, s.p.MemcpyHtoD(p, data), "hipMemcpyHtoD")
	return p
}

// download reads n bytes of device memory after all queued work is done.
func (s *suite) download(t *testing.T, src hipsys.DevicePtr, n int) []byte {
	t.Helper()
	require.NoError(t, s.p.DeviceSynchronize(), "hipDeviceSynchronize")
	out := make([]byte, n)
	require.NoError(t, s.p.MemcpyDtoH(out, src), "hipMemcpyDtoH")
	return out
}

// zeros allocates a device buffer of n zero bytes.
func (s *suite) zeros(t *testing.T, n int) hipsys.DevicePtr {
	t.Helper()
	return s.upload(t, make([]byte, n))
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u32Bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func bytesU64(b []byte) []uint64 {
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}

// pattern is n bytes that differ from their neighbours and from any fill byte a test
// uses, so a misplaced or short copy cannot match by accident.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1103515245 + 12345
		b[i] = byte(x >> 16)
	}
	return b
}

// blocks is the number of blocks of size block that cover n items.
func blocks(n, block int) uint32 { return uint32((n + block - 1) / block) }
