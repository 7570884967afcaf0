package compute_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// CubeCL's empty_read.rs and memory_pools.rs and
// the server's memory calls.

func TestReadEmptyBuffer(t *testing.T) {
	e := newEnv(t)
	h, err := e.srv.Empty(0, 0)
	require.NoError(t, err)
	b := e.keep(h)
	out, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(b, 0)}, 0).Wait()
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.NotNil(t, out[0])
	assert.Empty(t, out[0])
}

func TestWriteEmptyTensorThenRoundTrip(t *testing.T) {
	e := newEnv(t)
	empty := e.empty(0, 0)
	desc := compute.CopyDescriptor{Binding: empty, Shape: []int{0, 1}, Strides: []int{1, 1}, ElemSize: 4}
	_ = e.srv.Write([]compute.WriteOp{{Desc: desc, Data: nil}}, 0).Wait()
	require.NoError(t, e.srv.Check([]compute.Binding{empty}, 0), "an empty [0, 1] tensor must not reach a 2D copy")
	three := e.empty(0, 3)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.CopyDescriptor{Binding: three, Shape: []int{3, 1}, Strides: []int{1, 1}, ElemSize: 4}, Data: f32bytes(1, 2, 3)}}, 0).Wait()
	assert.Equal(t, []float32{1, 2, 3}, e.mustRead(0, three, 3))
	out, err := e.srv.Read([]compute.CopyDescriptor{desc}, 0).Wait()
	require.NoError(t, err)
	assert.Empty(t, out[0])
}

func TestPitchedCopies(t *testing.T) {
	e := newEnv(t)
	// A 2×3 tensor of f32 with rows 4 elements apart on the device.
	b := e.floats(0, -1, -1, -1, -1, -1, -1, -1, -1)
	desc := compute.CopyDescriptor{Binding: b, Shape: []int{2, 3}, Strides: []int{4, 1}, ElemSize: 4}
	_ = e.srv.Write([]compute.WriteOp{{Desc: desc, Data: f32bytes(1, 2, 3, 4, 5, 6)}}, 0).Wait()
	assert.Equal(t, []float32{1, 2, 3, -1, 4, 5, 6, -1}, e.mustRead(0, b, 8), "rows land at the pitch")
	out, err := e.srv.Read([]compute.CopyDescriptor{desc}, 1).Wait()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, bytesF32(out[0]), "the host side is dense")
}

func TestMemoryPoolsReconfigureInPlace(t *testing.T) {
	e := newEnv(t)
	const mib = 1 << 20
	require.NoError(t, e.srv.InstallMemoryPools(memory.Explicit(memory.SlicedSpec{PageSize: 8 * mib, MaxSliceSize: 8 * mib, MaxPoolSize: 16 * mib}), 0))
	var hs []compute.Handle
	for range 2 {
		h, err := e.srv.Empty(8*mib, 0)
		require.NoError(t, err)
		hs = append(hs, h)
	}
	_, err := e.srv.Empty(8*mib, 0)
	assert.ErrorIs(t, err, memory.ErrPoolCapacityExceeded, "the cap is an error, not a panic")
	assert.ErrorIs(t, e.srv.InstallMemoryPools(memory.Explicit(memory.SlicedSpec{PageSize: 16 * mib}), 0), memory.ErrPoolsInUse)
	for i := range hs {
		require.NoError(t, hs[i].Release())
	}
	require.NoError(t, e.srv.MemoryCleanup(0))
	require.NoError(t, e.srv.InstallMemoryPools(memory.Explicit(memory.SlicedSpec{PageSize: 16 * mib, MaxSliceSize: 16 * mib, MaxPoolSize: 64 * mib}), 0))
	hs = hs[:0]
	for range 4 {
		h, err := e.srv.Empty(16*mib, 0)
		require.NoError(t, err, "four 16 MiB allocations fit: the pools were rebuilt")
		hs = append(hs, h)
	}
	for i := range hs {
		require.NoError(t, hs[i].Release())
	}
	assert.ErrorIs(t, e.srv.InstallMemoryPools(memory.Explicit(memory.SlicedSpec{PageSize: 0}), 0), memory.ErrInvalidLayout)
}

func TestUsageBackToBaseline(t *testing.T) {
	e := newEnv(t)
	base, err := e.srv.MemoryUsage(0)
	require.NoError(t, err)
	sizes := []uint64{4, 256, 1000, 4096, 70_000}
	for i := range 100_000 {
		h, err := e.srv.Empty(sizes[i%len(sizes)], 0)
		if err != nil {
			require.NoError(t, err, "cycle %d", i)
		}
		if err := h.Release(); err != nil {
			require.NoError(t, err, "cycle %d", i)
		}
	}
	require.NoError(t, e.srv.MemoryCleanup(0))
	u, err := e.srv.MemoryUsage(0)
	require.NoError(t, err)
	assert.Equal(t, base.NumberAllocs, u.NumberAllocs)
	assert.Equal(t, base.BytesInUse, u.BytesInUse)
	rep, err := e.srv.MemoryReport(0)
	require.NoError(t, err)
	assert.NotEmpty(t, rep.Dynamic)
}

func TestAllocationModeAndStaging(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.srv.AllocationMode(memory.ModePersistent, 0))
	st, err := e.srv.Streams().Stream(0)
	require.NoError(t, err)
	assert.Equal(t, memory.ModePersistent, st.GPU.Mode())
	require.NoError(t, e.srv.AllocationMode(memory.ModeAuto, 0))
	assert.Equal(t, memory.ModeAuto, st.GPU.Mode())

	bufs, err := e.srv.Staging([]uint64{0, 16, 1 << 20}, 0)
	require.NoError(t, err)
	require.Len(t, bufs, 3)
	for i, n := range []int{0, 16, 1 << 20} {
		assert.Len(t, bufs[i].Bytes(), n)
		assert.True(t, bufs[i].Pinned())
		require.NoError(t, bufs[i].Release())
	}
	assert.Equal(t, []compute.StreamID{0}, e.srv.StreamIDs())
}

func TestInitializeMemoryFailureIsReturned(t *testing.T) {
	e := newEnv(t)
	e.f.Fail("hipMalloc", hipsys.ErrorOutOfMemory)
	_, err := e.srv.Empty(1<<20, 0)
	assert.Error(t, err, "initialize_memory's failure goes to the allocating caller, not a panic")
	e.f.Reset()
	h, err := e.srv.Empty(1<<20, 0)
	require.NoError(t, err)
	require.NoError(t, h.Release())
	h, err = e.srv.NewHandle(8, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, e.srv.InitializeMemory(h, 8, 1), compute.ErrInvalidArgument, "a handle is bound on its own stream")
	require.NoError(t, h.Release())
}

func TestGetResource(t *testing.T) {
	e := newEnv(t)
	b := e.floats(0, 1, 2)
	r, err := e.srv.GetResource(b, 1)
	require.NoError(t, err)
	assert.NotZero(t, r.Ptr)
	assert.Equal(t, uint64(8), r.Size)
	require.NoError(t, r.Release())
}

// A staging request no memory can hold is an error, never a panic (makeslice), and
// leaves nothing reserved.
func TestStagingTooLargeIsAnError(t *testing.T) {
	e := newEnv(t)
	for _, n := range []uint64{1 << 62, math.MaxUint64} {
		bufs, err := e.srv.Staging([]uint64{8, n}, 0)
		assert.ErrorIs(t, err, compute.ErrNoPinnedMemory, "%d bytes", n)
		assert.Nil(t, bufs)
	}
	bufs, err := e.srv.Staging([]uint64{8}, 0)
	require.NoError(t, err)
	require.NoError(t, bufs[0].Release())
}
