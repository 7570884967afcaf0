package conformance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func init() { deviceLibraryChecks["grid_sync"] = checkGridSync }

// cooperative is the suite's part of cooperative launch: the occupancy query, a small
// cooperative grid of the grid_sync corpus source whose blocks wait for each other, one
// block over the device's limit refused, and (on the cpu device, where its outcome is
// defined) this_grid().sync() in a launch that is not cooperative ending that launch with
// an error naming it. The corpus check runs the full-size grid.
func (s *suite) cooperative(t *testing.T) {
	p := s.p
	var src string
	for _, k := range Corpus() {
		if k.Name == "grid_sync" {
			src = k.Source
		}
	}
	m, err := p.ModuleLoadData(s.compile(t, src, "grid_sync.hip", nil, CorpusOptions))
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.ModuleUnload(m)) }()
	rounds, err := p.ModuleGetFunction(m, "grid_rounds")
	require.NoError(t, err)
	const block = 64
	perMP, err := p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(rounds, block, 0)
	require.NoError(t, err, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor")
	require.Positive(t, perMP)
	limit := uint32(perMP * s.props.MultiProcessorCount)

	slots, bad := s.zeros(t, 4*int(limit+1)), s.zeros(t, 4)
	st := s.stream(t, hipsys.StreamNonBlocking)
	var args hipsys.KernelArgs
	args.Ptr(slots).Ptr(bad).I32(5)
	err = p.ModuleLaunchCooperativeKernel(rounds, d1(2), d1(block), 0, st, &args)
	if errors.Is(err, hipsys.ErrorNotSupported) {
		t.Skipf("no cooperative launch on this platform: %v", err)
	}
	require.NoError(t, err, "hipModuleLaunchCooperativeKernel")
	require.NoError(t, p.StreamSynchronize(st))
	assert.Equal(t, []uint32{0}, bytesU32(s.download(t, bad, 4)), "every block saw every other's round")

	err = p.ModuleLaunchCooperativeKernel(rounds, d1(limit+1), d1(block), 0, st, &args)
	s.expect(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorCooperativeLaunchTooLarge)
	require.NoError(t, p.StreamSynchronize(st))

	if p.Name() == "cpu" {
		require.NoError(t, p.ModuleLaunchKernel(rounds, d1(2), d1(block), 0, st, &args))
		err = p.StreamSynchronize(st)
		require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
		assert.ErrorContains(t, err, "this_grid().sync()")
	}
}

// checkGridSync runs the grid_sync corpus source cooperatively over as many blocks as the
// device says it holds at once (the occupancy query times MultiProcessorCount, as real
// code sizes a cooperative grid), and checks that one block more is refused with
// hipErrorCooperativeLaunchTooLarge. A platform that cannot launch cooperatively (a ROCm
// without hipModuleLaunchCooperativeKernel) skips it, saying so.
func checkGridSync(t *testing.T, c *corpusRun) {
	p := c.s.p
	const block = 256
	reduce := c.fn(t, "grid_reduce")
	perMP, err := p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(reduce, block, 0)
	require.NoError(t, err, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor")
	require.Positive(t, perMP, "a block of 256 threads fits a multiprocessor")
	blocks := uint32(perMP * c.s.props.MultiProcessorCount)

	const n = 300007
	in := make([]int32, n)
	var want int32
	g := lcg(7)
	for i := range in {
		in[i] = int32(g.next()%201) - 100
		want += in[i]
	}
	din, partial, out := up(t, c, in), c.s.zeros(t, 4*int(blocks)), c.s.zeros(t, 8)
	var args hipsys.KernelArgs
	args.Ptr(din).Ptr(partial).Ptr(out).I32(n)
	err = p.ModuleLaunchCooperativeKernel(reduce, d1(blocks), d1(block), 0, 0, &args)
	if errors.Is(err, hipsys.ErrorNotSupported) {
		t.Skipf("no cooperative launch on this platform: %v", err)
	}
	require.NoError(t, err, "hipModuleLaunchCooperativeKernel of %d blocks", blocks)
	got := down[int32](t, c, out, 2)
	assert.Equal(t, want, got[0], "the sum over %d blocks", blocks)
	assert.Equal(t, int32(1), got[1], "grid_group::is_valid() in a cooperative launch")

	rounds := c.fn(t, "grid_rounds")
	slots, bad := c.s.zeros(t, 4*int(blocks)), c.s.zeros(t, 4)
	args.Reset().Ptr(slots).Ptr(bad).I32(20)
	require.NoError(t, p.ModuleLaunchCooperativeKernel(rounds, d1(blocks), d1(block), 0, 0, &args))
	assert.Equal(t, []int32{0}, down[int32](t, c, bad, 1), "a block read a slot before the grid's barrier let every block write it")

	args.Reset().Ptr(din).Ptr(partial).Ptr(out).I32(n)
	err = p.ModuleLaunchCooperativeKernel(reduce, d1(blocks+1), d1(block), 0, 0, &args)
	var he *hipsys.Error
	require.ErrorAs(t, err, &he, "one block more than the device holds at once")
	assert.Equal(t, hipsys.ErrorCooperativeLaunchTooLarge, he.Status)
	assert.Equal(t, "hipModuleLaunchCooperativeKernel", he.Call)
	require.NoError(t, p.DeviceSynchronize())
}
