package conformance

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// size of the linear copy tests: a megabyte and an odd tail, so that a copy done in
// words or pages would show a short end.
const linearSize = 1<<20 + 13

func (s *suite) memory(t *testing.T) {
	p := s.p
	t.Run("malloc and free", func(t *testing.T) {
		ptr, err := p.Malloc(1 << 20)
		require.NoError(t, err)
		require.NotZero(t, ptr)
		// hipMalloc (like cudaMalloc) aligns at least to 256 bytes; kernels and the
		// memory pools above rely on it.
		assert.Zero(t, ptr%256, "hipMalloc alignment")
		assert.NoError(t, p.Free(ptr))
	})

	t.Run("malloc zero", func(t *testing.T) {
		ptr, err := p.Malloc(0)
		assert.NoError(t, err)
		assert.Zero(t, ptr)
		assert.NoError(t, p.Free(0), "hipFree(NULL) is a no-op")
	})

	t.Run("huge malloc", func(t *testing.T) {
		ptr, err := p.Malloc(1 << 62)
		s.expect(t, err, "hipMalloc", hipsys.ErrorOutOfMemory)
		assert.Zero(t, ptr)
	})

	t.Run("host malloc", func(t *testing.T) {
		for _, flags := range []hipsys.HostMallocFlags{hipsys.HostMallocDefault, hipsys.HostMallocPortable, hipsys.HostMallocMapped} {
			h, err := p.HostMalloc(4096, flags)
			require.NoError(t, err, "flags %d", flags)
			require.NotZero(t, h)
			b := h.Bytes(4096)
			copy(b, pattern(4096, 1))
			assert.Equal(t, pattern(4096, 1), h.Bytes(4096), "pinned memory keeps what is written")
			assert.NoError(t, p.HostFree(h))
		}
	})

	t.Run("memset", func(t *testing.T) {
		ptr := s.malloc(t, 4096)
		require.NoError(t, p.Memset(ptr, 0xab, 4096))
		assert.Equal(t, bytes.Repeat([]byte{0xab}, 4096), s.download(t, ptr, 4096))
		// A sub-range leaves its neighbours alone.
		require.NoError(t, p.Memset(ptr+16, 0x11, 100))
		want := bytes.Repeat([]byte{0xab}, 4096)
		copy(want[16:116], bytes.Repeat([]byte{0x11}, 100))
		assert.Equal(t, want, s.download(t, ptr, 4096))

		st := s.stream(t, hipsys.StreamNonBlocking)
		require.NoError(t, p.MemsetAsync(ptr, 0x7e, 4000, st))
		s.sync(t, st)
		copy(want, bytes.Repeat([]byte{0x7e}, 4000))
		assert.Equal(t, want, s.download(t, ptr, 4096))
	})

	t.Run("sync copies", func(t *testing.T) {
		src := pattern(linearSize, 2)
		a := s.upload(t, src)
		b := s.malloc(t, linearSize)
		require.NoError(t, p.MemcpyDtoD(b, a, linearSize))
		assert.True(t, bytes.Equal(src, s.download(t, b, linearSize)), "HtoD then DtoD then DtoH")
		// An offset copy into the middle of an allocation.
		require.NoError(t, p.MemcpyHtoD(b+1000, []byte{1, 2, 3}))
		got := s.download(t, b, 1010)
		assert.Equal(t, []byte{1, 2, 3}, got[1000:1003])
		assert.Equal(t, src[1003:1010], got[1003:1010])
		assert.NoError(t, p.MemcpyHtoD(b, nil), "an empty copy is a no-op")
	})

	t.Run("async copies", func(t *testing.T) {
		st := s.stream(t, hipsys.StreamNonBlocking)
		hin, hout := s.hostMalloc(t, linearSize), s.hostMalloc(t, linearSize)
		src := pattern(linearSize, 3)
		copy(hin.Bytes(linearSize), src)
		a, b := s.malloc(t, linearSize), s.malloc(t, linearSize)
		require.NoError(t, p.MemcpyHtoDAsync(a, hin, linearSize, st))
		require.NoError(t, p.MemcpyDtoDAsync(b, a, linearSize, st))
		require.NoError(t, p.MemcpyDtoHAsync(hout, b, linearSize, st))
		s.sync(t, st)
		assert.True(t, bytes.Equal(src, hout.Bytes(linearSize)), "HtoDAsync, DtoDAsync, DtoHAsync in order")
	})

	t.Run("null pointers", func(t *testing.T) {
		// hipErrorInvalidValue is what HIP returns for a NULL copy end on AMD, and
		// CUDA's INVALID_VALUE (1) is the same number.
		ptr := s.malloc(t, 64)
		h := s.hostMalloc(t, 64)
		buf := make([]byte, 64)
		st := s.stream(t, hipsys.StreamNonBlocking)
		for _, tc := range []struct {
			call string
			err  error
		}{
			{"hipMemcpyHtoD", p.MemcpyHtoD(0, buf)},
			{"hipMemcpyDtoH", p.MemcpyDtoH(buf, 0)},
			{"hipMemcpyDtoD", p.MemcpyDtoD(0, ptr, 64)},
			{"hipMemcpyDtoD", p.MemcpyDtoD(ptr, 0, 64)},
			{"hipMemcpyHtoDAsync", p.MemcpyHtoDAsync(0, h, 64, st)},
			{"hipMemcpyHtoDAsync", p.MemcpyHtoDAsync(ptr, 0, 64, st)},
			{"hipMemcpyDtoHAsync", p.MemcpyDtoHAsync(0, ptr, 64, st)},
			{"hipMemcpyDtoHAsync", p.MemcpyDtoHAsync(h, 0, 64, st)},
			{"hipMemcpyDtoDAsync", p.MemcpyDtoDAsync(0, ptr, 64, st)},
			{"hipMemset", p.Memset(0, 0, 64)},
			{"hipMemsetAsync", p.MemsetAsync(0, 0, 64, st)},
		} {
			s.expect(t, tc.err, tc.call, hipsys.ErrorInvalidValue)
		}
		s.sync(t, st)
	})
}
