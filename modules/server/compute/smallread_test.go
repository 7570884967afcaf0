package compute_test

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// stager is the cpu platform claiming hipsys.SmallReadStager, so that the server makes
// small reads through its pinned slots here as it does on nvidia.
type stager struct{ hipsys.Platform }

func (stager) StagesSmallReads() bool { return true }

func newStagingEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, func(p hipsys.Platform) hipsys.Platform { return stager{p} }, compute.Config{})
}

// A small read goes through a slot (an async copy and a wait for the stream), and needs
// no idle stream: right after a launch it returns the launch's bytes. A read larger than
// a slot takes the other paths.
func TestSmallReadsGoThroughSlots(t *testing.T) {
	e := newStagingEnv(t)
	out := e.empty(0, 1)
	async := e.f.Calls("hipMemcpyDtoHAsync")
	for i := range 3 {
		spinArgs := &compute.Args{Buffers: []compute.Binding{out}, Scalars: []compute.Scalar{compute.U64(uint64(1000 * (i + 1)))}}
		require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 0, compute.Execute))
		got, err := e.srv.Read([]compute.CopyDescriptor{compute.Linear(out, 4)}, 0).Wait()
		require.NoError(t, err)
		n := uint64(1000 * (i + 1))
		assert.Equal(t, uint32(n*(n-1)/2), binary.LittleEndian.Uint32(got[0]), "launch %d", i)
	}
	assert.Equal(t, async+3, e.f.Calls("hipMemcpyDtoHAsync"), "each small read is one async copy")

	for _, n := range []int{1, 4 << 10 / 4, 4<<10/4 + 1, 64 << 10 / 4} {
		vs := make([]float32, n)
		for i := range vs {
			vs[i] = float32(i*7 + n)
		}
		b := e.floats(0, vs...)
		require.Equal(t, vs, e.mustRead(0, b, n), "%d floats", n)
	}

}

// More small reads in flight than slots: those beyond take the other paths, and every
// read gets its own bytes.
func TestSmallReadsBeyondTheSlots(t *testing.T) {
	e := newStagingEnv(t)
	const n = 100
	bufs := make([]compute.Binding, n)
	for i := range bufs {
		bufs[i] = e.floats(compute.StreamID(i%4), float32(i), float32(-i))
	}
	futures := make([]*compute.ReadFuture, n)
	for i := range futures {
		futures[i] = e.srv.Read([]compute.CopyDescriptor{compute.Linear(bufs[i], 8)}, compute.StreamID(i%4))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range futures {
		wg.Go(func() {
			got, err := futures[i].Wait()
			if err == nil && (bytesF32(got[0])[0] != float32(i) || bytesF32(got[0])[1] != float32(-i)) {
				err = fmt.Errorf("read %d got %v", i, bytesF32(got[0]))
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "read %d", i)
	}
}

// A slot read's copy that the platform refuses fails the read and gives the slot back;
// a wait that fails fails the read, leaves the writes it did not confirm carrying the
// failure (as a Sync's does), and keeps its slot out of use; a destination of the wrong
// length fails the read after its copy is done.
func TestSmallReadFailures(t *testing.T) {
	e := newStagingEnv(t)
	x := e.floats(0, 5, 6)
	e.f.FailNth("hipMemcpyDtoHAsync", 1, hipsys.ErrorInvalidValue)
	_, err := e.read(0, x, 2)
	require.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	require.Equal(t, []float32{5, 6}, e.mustRead(0, x, 2), "the refused copy changed nothing")

	out := e.empty(0, 1)
	spinArgs := &compute.Args{Buffers: []compute.Binding{out}, Scalars: []compute.Scalar{compute.U64(10)}}
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 0, compute.Execute))
	e.f.FailNth("hipStreamSynchronize", 1, hipsys.ErrorLaunchFailure)
	_, err = e.read(0, x, 2)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	e.f.Reset()
	require.ErrorIs(t, e.srv.Check([]compute.Binding{out}, 0), hipsys.ErrorLaunchFailure,
		"the launch the failed wait did not confirm carries its failure")
	require.Equal(t, []float32{5, 6}, e.mustRead(0, x, 2), "a read after it has a slot")

	f := e.srv.Read([]compute.CopyDescriptor{compute.Linear(x, 8)}, 0)
	require.ErrorIs(t, f.WaitInto(make([]byte, 4)), compute.ErrInvalidArgument)
	for range 40 { // more than the slots: none was lost to the refused destination
		require.Equal(t, []float32{5, 6}, e.mustRead(0, x, 2))
	}
}
