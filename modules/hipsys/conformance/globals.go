package conformance

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// moduleGlobals: a module's __constant__ and __device__ variables are found by name with
// their sizes, start with the values the source gives them, and take host writes that
// the next launch sees and kernel writes that the host reads back, through the ordinary
// copy calls, synchronous and queued on a stream.
func (s *suite) moduleGlobals(t *testing.T) {
	m := s.module(t, "globals", "-O3")
	table, size, err := s.p.ModuleGetGlobal(m, "scale_table")
	require.NoError(t, err, "hipModuleGetGlobal scale_table")
	require.NotZero(t, table)
	assert.Equal(t, uint64(16), size, "scale_table is int[4]")
	total, size, err := s.p.ModuleGetGlobal(m, "scaled_total")
	require.NoError(t, err, "hipModuleGetGlobal scaled_total")
	assert.Equal(t, uint64(8), size, "scaled_total is an unsigned long long")
	again, _, err := s.p.ModuleGetGlobal(m, "scale_table")
	require.NoError(t, err)
	assert.Equal(t, table, again, "one variable, one address")

	require.NoError(t, s.p.DeviceSynchronize())
	initial := make([]byte, 16)
	require.NoError(t, s.p.MemcpyDtoH(initial, table), "reading scale_table")
	assert.Equal(t, []uint32{1, 2, 3, 4}, bytesU32(initial), "the source's initializer")

	const n = 1000
	data := make([]uint32, n)
	for i := range data {
		data[i] = uint32(i + 1)
	}
	run := func(st hipsys.Stream, scales []uint32, async bool) {
		dd := s.upload(t, u32Bytes(data))
		if async {
			// Queued on the stream behind nothing the host waits for: the launch after it
			// on the same stream must still see the new table and the zeroed counter.
			pin := s.hostMalloc(t, 16)
			copy(pin.Bytes(16), u32Bytes(scales))
			require.NoError(t, s.p.MemcpyHtoDAsync(table, pin, 16, st), "hipMemcpyHtoDAsync to scale_table")
			require.NoError(t, s.p.MemsetAsync(total, 0, 8, st), "hipMemsetAsync of scaled_total")
		} else {
			require.NoError(t, s.p.MemcpyHtoD(table, u32Bytes(scales)), "hipMemcpyHtoD to scale_table")
			require.NoError(t, s.p.Memset(total, 0, 8), "hipMemset of scaled_total")
		}
		s.launch(t, s.function(t, "globals", "scale_by_table"), dim(blocks(n, 128), 1), dim(128, 1), 0, st,
			new(hipsys.KernelArgs).Ptr(dd).I32(n))
		s.sync(t, st)
		got := bytesU32(s.download(t, dd, 4*n))
		var want uint64
		for i := range n {
			w := data[i] * scales[i%4]
			want += uint64(w)
			if got[i] != w {
				require.Equal(t, w, got[i], "data[%d] with scales %v", i, scales)
			}
		}
		sum := make([]byte, 8)
		require.NoError(t, s.p.MemcpyDtoH(sum, total), "reading scaled_total")
		assert.Equal(t, want, binary.LittleEndian.Uint64(sum), "scaled_total with scales %v", scales)
	}
	run(hipsys.NullStream, []uint32{5, 6, 7, 8}, false)
	run(s.stream(t, hipsys.StreamNonBlocking), []uint32{9, 1, 2, 3}, true)

	t.Run("unknown name", func(t *testing.T) {
		_, _, err := s.p.ModuleGetGlobal(m, "no_such_variable")
		// HIP and CUDA both say NOT_FOUND (500); some ROCm releases say hipErrorInvalidSymbol.
		s.expect(t, err, "hipModuleGetGlobal", hipsys.ErrorNotFound, hipsys.ErrorInvalidSymbol)
		assert.ErrorContains(t, err, "no_such_variable", "the error names the symbol")
		_, _, err = s.p.ModuleGetGlobal(m, "scale_by_table")
		s.expect(t, err, "hipModuleGetGlobal", hipsys.ErrorNotFound, hipsys.ErrorInvalidSymbol)
	})
	t.Run("unknown module", func(t *testing.T) {
		_, _, err := s.p.ModuleGetGlobal(0x1234, "scale_table")
		s.expect(t, err, "hipModuleGetGlobal", badHandle...)
	})
}
