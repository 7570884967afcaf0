package jit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A kernel in a disabled conditional block is not an entry (the compiler never sees it,
// so a launcher naming it would not compile); -D options and the platform's macros decide
// the conditionals as they do in the compile.
func TestConditionalKernelsFollowThePreprocessor(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
#if 0
extern "C" __global__ void never(unsigned* p) { p[0] = 1; }
#endif
#ifdef WITH_EXTRA
extern "C" __global__ void extra(int* p) { p[0] = 7; }
#else
extern "C" __global__ void fallback(int* p) { p[0] = 8; }
#endif
#if defined(__HIP_PLATFORM_CUBEHIP_CPU__) && !defined(__HIP_PLATFORM_AMD__)
extern "C" __global__ void cpu_only(int* p) { p[0] = 9; }
#endif
`
	m := load(t, src)
	for _, name := range []string{"never", "extra"} {
		_, err := m.Function(name)
		require.Equal(t, hipsys.ErrorNotFound, statusOf(err), name)
	}
	function(t, m, "fallback")
	function(t, m, "cpu_only")

	m = load(t, src, "-DWITH_EXTRA")
	f := function(t, m, "extra")
	out := alloc[int32](t, 1)
	launch(t, f, dim(1, 1, 1), dim(1, 1, 1), 0, new(hipsys.KernelArgs).Ptr(out.dev()))
	require.Equal(t, int32(7), out.s[0])
	_, err := m.Function("fallback")
	require.Equal(t, hipsys.ErrorNotFound, statusOf(err))
}
