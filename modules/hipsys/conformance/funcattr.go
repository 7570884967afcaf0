package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// funcAttributes: a kernel's attributes read (every one answers; MAX_THREADS_PER_BLOCK
// within the device's), MAX_DYNAMIC_SHARED_SIZE_BYTES set to all the device can give the
// kernel and read back, one byte more refused, the carveout set, an attribute that cannot
// be set refused; on the cpu device, where a launch is held to the value set, a launch
// over a lowered limit refused.
func (s *suite) funcAttributes(t *testing.T) {
	p := s.p
	fn := s.function(t, "bigshared", "shared_window")
	for a := hipsys.FuncAttributeMaxThreadsPerBlock; a <= hipsys.FuncAttributePreferredSharedMemoryCarveout; a++ {
		v, err := p.FuncGetAttribute(fn, a)
		require.NoError(t, err, "hipFuncGetAttribute %s", a)
		t.Logf("%s = %d", a, v)
	}
	threads, err := p.FuncGetAttribute(fn, hipsys.FuncAttributeMaxThreadsPerBlock)
	require.NoError(t, err)
	assert.Positive(t, threads)
	assert.LessOrEqual(t, threads, s.props.MaxThreadsPerBlock)
	static, err := p.FuncGetAttribute(fn, hipsys.FuncAttributeSharedSizeBytes)
	require.NoError(t, err)
	before, err := p.FuncGetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes)
	require.NoError(t, err)

	limit := int(max(s.props.SharedMemPerBlockOptin, s.props.SharedMemPerBlock)) - static
	// The suite's other launches of this kernel find it as they left it.
	t.Cleanup(func() { _ = p.FuncSetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, max(before, limit)) })
	require.NoError(t, p.FuncSetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, limit), "hipFuncSetAttribute")
	got, err := p.FuncGetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes)
	require.NoError(t, err)
	assert.Equal(t, limit, got)
	s.expect(t, p.FuncSetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, limit+1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	s.expect(t, p.FuncSetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, -1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	require.NoError(t, p.FuncSetAttribute(fn, hipsys.FuncAttributePreferredSharedMemoryCarveout, 50), "hipFuncSetAttribute")
	s.expect(t, p.FuncSetAttribute(fn, hipsys.FuncAttributePreferredSharedMemoryCarveout, 101), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	s.expect(t, p.FuncSetAttribute(fn, hipsys.FuncAttributeNumRegs, 1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	_, err = p.FuncGetAttribute(fn, 42)
	s.expect(t, err, "hipFuncGetAttribute", hipsys.ErrorInvalidValue)

	if p.Name() == "cpu" {
		require.NoError(t, p.FuncSetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, 1024))
		err := p.ModuleLaunchKernel(fn, dim(1, 1), dim(64, 1), 2048, hipsys.NullStream,
			new(hipsys.KernelArgs).Ptr(0).Ptr(0).U32(0))
		s.expect(t, err, "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
		require.NoError(t, p.FuncSetAttribute(fn, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, limit))
	}
}
