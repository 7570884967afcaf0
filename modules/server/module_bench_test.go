package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// moduleBenchKernels is the number of kernels of the source BenchmarkModuleCompile
// makes launchable.
const moduleBenchKernels = 8

// moduleBenchSource is a source of n kernels, unique to tag so that no cache answers.
func moduleBenchSource(n int, tag string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#include <hip/hip_runtime.h>\n// %s\n", tag)
	for i := range n {
		fmt.Fprintf(&b, `extern "C" __global__ void k%d(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * %d.0f + 1.0f;
}
`, i, i+2)
	}
	return b.String()
}

// BenchmarkModuleCompile is the cost of making every kernel of one source launchable
// from cold (no disk cache): the kernels of a source are one module, compiled once
// (module), against the anchor of what each kernel compiled on its own costs, the
// same source compiled once per kernel (per-kernel), in the same run. ms/source is
// the time from the first Compile to the last.
func BenchmarkModuleCompile(b *testing.B) {
	d, err := server.Open(server.Options{Platform: "cpu", CacheDir: "-"})
	require.NoError(b, err)
	defer d.Close()
	run := func(b *testing.B, perKernel bool) {
		var total time.Duration
		n := 0
		for b.Loop() {
			tag := fmt.Sprintf("%s %d %d", b.Name(), time.Now().UnixNano(), n)
			n++
			start := time.Now()
			for i := range moduleBenchKernels {
				src := moduleBenchSource(moduleBenchKernels, tag)
				if perKernel {
					src += fmt.Sprintf("// kernel %d's own module\n", i) // what a module per kernel compiled
				}
				require.NoError(b, d.Compile(server.DefineKernel(src, fmt.Sprintf("k%d", i))))
			}
			total += time.Since(start)
		}
		b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/source")
	}
	b.Run("module", func(b *testing.B) { run(b, false) })
	b.Run("per-kernel", func(b *testing.B) { run(b, true) })
}
