package jit

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

// Every public HIP header name resolves to cubehip's own: with all of them included, the
// program compiles (the system's ROCm headers, which this machine may have, stop at an
// #error without the AMD or NVIDIA compiler) and a kernel using each piece runs.
func TestHipHeadersAreCubehips(t *testing.T) {
	if os.Getenv("CUBEHIP_CACHE_DIR") == "" {
		t.Setenv("CUBEHIP_CACHE_DIR", t.TempDir())
	}
	var names []string
	for n := range hipHeaders {
		names = append(names, n)
	}
	sort.Strings(names)
	var src strings.Builder
	for _, n := range names {
		src.WriteString("#include <hip/" + n + ">\n")
	}
	src.WriteString(`namespace cg = cooperative_groups;
extern "C" __global__ void k(float* out) {
	cg::thread_block b = cg::this_thread_block();
	__half h = 1.5f;
	__hip_bfloat16 bf = 2.0f;
	hipFloatComplex z = hipCmulf(make_hipFloatComplex(1, 2), make_hipFloatComplex(3, -1)); // 5+5i
	out[b.thread_rank()] = float(h) * float(bf) + hipCabsf(hipCdivf(z, make_hipFloatComplex(5, 5)));
}
`)
	img, log, err := NewCompiler(t.TempDir()).Compile(src.String(), "headers.hip", nil, nil)
	require.NoError(t, err, log)
	m, err := Load(img)
	require.NoError(t, err)
	defer m.Close()
	f, err := m.Function("k")
	require.NoError(t, err)
	out := hostmem.Alloc(4 * 4)
	defer hostmem.Free(out)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(out))
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, f.Launch(one, hipsys.Dim3{X: 4, Y: 1, Z: 1}, 0, args.Buffer(), args.Offsets()))
	require.Equal(t, []float32{4, 4, 4, 4}, hostmem.Slice[float32](out, 4)) // 1.5*2 + |1|
}
