package compute_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

func TestInfoBufferCached(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	args := &compute.Args{Buffers: []compute.Binding{in, out}, Info: []uint64{3}}
	require.NoError(t, e.srv.Launch(addOneInfo, compute.Static(1, 1, 1), args, 0, compute.Execute))
	uploads := e.f.Calls("hipMemcpyHtoDAsync")
	require.NoError(t, e.srv.Launch(addOneInfo, compute.Static(1, 1, 1), args, 0, compute.Execute))
	assert.Equal(t, uploads, e.f.Calls("hipMemcpyHtoDAsync"), "the same words are uploaded once")
	assert.Equal(t, []float32{2, 3, 4, 0}, e.mustRead(0, out, 4), "the info pointer is passed last")

	// Words too large for the cache are uploaded per launch and dropped after it.
	big := make([]uint64, 1024)
	big[0] = 4
	args.Info = big
	for range 3 {
		require.NoError(t, e.srv.Launch(addOneInfo, compute.Static(1, 1, 1), args, 0, compute.Execute))
	}
	assert.Equal(t, uploads+3, e.f.Calls("hipMemcpyHtoDAsync"))
	assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4))
}

func TestCrossStreamLaunches(t *testing.T) {
	e := newEnv(t)
	in := e.floats(0, 1, 2, 3, 4)
	mid, out := e.empty(1, 4), e.empty(2, 4)
	for range 20 {
		launch(t, e.srv, addOne, 4, 1, in, mid)  // stream 1 reads stream 0's buffer
		launch(t, e.srv, mulTwo, 4, 2, mid, out) // stream 2 waits for stream 1's write
		assert.Equal(t, []float32{4, 6, 8, 10}, e.mustRead(3, out, 4))
	}
}

func TestReadManyDescriptorsAndWaitConcurrentSafe(t *testing.T) {
	e := newEnv(t)
	bufs := make([]compute.Binding, 8)
	for i := range bufs {
		bufs[i] = e.floats(0, float32(i), float32(i+1))
	}
	futures := make([]*compute.ReadFuture, 16)
	for i := range futures {
		descs := []compute.CopyDescriptor{compute.Linear(bufs[i%8], 8), compute.Linear(bufs[(i+1)%8], 4)}
		futures[i] = e.srv.Read(descs, compute.StreamID(i%3))
	}
	var wg sync.WaitGroup
	for i, f := range futures {
		wg.Go(func() {
			out, err := f.Wait()
			assert.NoError(t, err)
			assert.Equal(t, []float32{float32(i % 8), float32(i%8 + 1)}, bytesF32(out[0]))
			assert.Equal(t, []float32{float32((i + 1) % 8)}, bytesF32(out[1]))
		})
	}
	wg.Wait()
}

func TestHeapFallbackWhenPinnedRunsOut(t *testing.T) {
	e := newEnv(t)
	e.f.Fail("hipHostMalloc", hipsys.ErrorOutOfMemory)
	b := e.floats(0, 1, 2, 3, 4) // the write falls back to a blocking copy
	assert.Equal(t, []float32{1, 2, 3, 4}, e.mustRead(0, b, 4), "and so does the read")
	bufs, err := e.srv.Staging([]uint64{8}, 0)
	require.NoError(t, err)
	assert.False(t, bufs[0].Pinned())
	assert.Len(t, bufs[0].Bytes(), 8)
	require.NoError(t, bufs[0].Release())
	pitched := compute.CopyDescriptor{Binding: b, Shape: []int{2, 1}, Strides: []int{2, 1}, ElemSize: 4}
	_ = e.srv.Write([]compute.WriteOp{{Desc: pitched, Data: f32bytes(9, 9)}}, 0).Wait()
	assert.ErrorIs(t, e.srv.Check([]compute.Binding{b}, 0), compute.ErrNoPinnedMemory)
}

func TestLaunchReleasedBindingsDoNotPanic(t *testing.T) {
	e := newEnv(t)
	in := e.floats(0, 1, 2)
	h, err := e.srv.Empty(8, 0)
	require.NoError(t, err)
	out, err := h.Binding()
	require.NoError(t, err)
	view := out
	require.NoError(t, out.Release())
	require.NoError(t, h.Release())
	require.NoError(t, e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, view}, Scalars: []compute.Scalar{compute.U32(2)}}, 0, compute.Execute))
	require.NoError(t, e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: make([]compute.Binding, 2)}, 0, compute.Execute))
	_, err = e.read(0, view, 2)
	assert.Error(t, err)
	assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0))
}

// panicky is a platform whose next launch panics, as a driver binding with a bug might.
type panicky struct {
	hipsys.Platform
	armed bool
}

func (p *panicky) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, sh uint32, s hipsys.Stream, a *hipsys.KernelArgs) error {
	if p.armed {
		p.armed = false
		panic("driver binding bug")
	}
	return p.Platform.ModuleLaunchKernel(fn, grid, block, sh, s, a)
}

// TestLaunchPanicLeavesOutputsClaimed: a launch that panics inside the platform leaves
// its outputs claimed (a read fails rather than return bytes nothing wrote) and its
// inputs as they were, on the fast path (an empty failure store) as on the full one (a
// failure elsewhere), and the stream keeps working.
func TestLaunchPanicLeavesOutputsClaimed(t *testing.T) {
	for _, fast := range []bool{true, false} {
		pk := &panicky{}
		e := newEnvOver(t, func(p hipsys.Platform) hipsys.Platform { pk.Platform = p; return pk })
		in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
		if !fast {
			failed := e.empty(0, 1)
			e.srv.Streams().Taint(assert.AnError, failed)
		}
		pk.armed = true
		assert.Panics(t, func() {
			_ = e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(4)}}, 0, compute.Execute)
		}, "fast=%v", fast)
		assert.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), stream.ErrUnsettled, "fast=%v: the output is claimed", fast)
		assert.NoError(t, e.srv.Check([]compute.Binding{in}, 0), "fast=%v: the input is untouched", fast)

		launch(t, e.srv, addOne, 4, 0, in, out)
		assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4), "fast=%v: a relaunch settles it", fast)
	}
}
