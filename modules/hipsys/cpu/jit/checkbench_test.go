package jit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// checkBenchSrc holds each kernel as a source (a module) of its own: what a module is
// instrumented for follows what it contains (racecheck watches shared memory only, so a
// module without any is left to the other checks).
var checkBenchSrc = map[string]string{
	"saxpy": `
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`,
	"stencil": `
extern "C" __global__ void stencil(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}`,
	"reduce": `
extern "C" __global__ void reduce(const float* in, float* out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}`,
}

// BenchmarkCheckCost runs each kernel unchecked and under each check on the same data,
// in one run: the checked figures are read against the unchecked anchor beside them.
func BenchmarkCheckCost(b *testing.B) {
	const n = 1 << 20
	for _, entry := range []string{"saxpy", "stencil", "reduce"} {
		for _, c := range []struct {
			name   string
			checks hipsys.Checks
		}{{"unchecked", 0}, {"memcheck", hipsys.CheckMemory}, {"initcheck", hipsys.CheckInit}, {"racecheck", hipsys.CheckRace},
			{"synccheck", hipsys.CheckSync}} {
			b.Run(entry+"/"+c.name, func(b *testing.B) {
				var opts []string
				if c.checks != 0 {
					opts = []string{jit.CheckOption(c.checks)}
				}
				img, log, err := jit.NewCompiler("").Compile(checkBenchSrc[entry], entry+".hip", nil, opts)
				require.NoError(b, err, log)
				m, err := jit.Load(img)
				require.NoError(b, err)
				defer m.Close()
				f, err := m.Function(entry)
				require.NoError(b, err)
				px, _, rx := region(b, n)
				py, _, ry := region(b, n)
				var args hipsys.KernelArgs
				if entry == "saxpy" {
					args.F32(2).Ptr(hipsys.DevicePtr(px)).Ptr(hipsys.DevicePtr(py)).I32(n)
				} else {
					args.Ptr(hipsys.DevicePtr(px)).Ptr(hipsys.DevicePtr(py)).I32(n)
				}
				grid, block := hipsys.Dim3{X: n / 256, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}
				if c.checks&hipsys.CheckInit != 0 {
					// Uploaded data: what initcheck judges is written, as it must be.
					written(b, &rx)
					written(b, &ry)
				}
				regions := []jit.CheckRegion{rx, ry}
				run := func() error {
					if f.Checked() {
						return f.LaunchChecked(grid, block, 0, args.Buffer(), args.Offsets(), false, regions)
					}
					return f.Launch(grid, block, 0, args.Buffer(), args.Offsets())
				}
				require.NoError(b, run())
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
