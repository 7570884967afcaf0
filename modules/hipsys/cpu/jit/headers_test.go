package jit

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	out[b.thread_rank()] = float(h) * float(bf);
}
`)
	img, log, err := NewCompiler(t.TempDir()).Compile(src.String(), "headers.hip", nil, nil)
	require.NoError(t, err, log)
	m, err := Load(img)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Function("k")
	require.NoError(t, err)
}
