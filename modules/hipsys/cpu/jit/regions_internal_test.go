package jit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// EntryModes is how each entry of src runs: "loop", "regions", or "fiber: " and why.
func EntryModes(src string) map[string]string { return modesOf(scan(src)) }

// modesOf is how each entry of p runs, as EntryModes says it.
func modesOf(p *program) map[string]string {
	modes := map[string]string{}
	for _, b := range p.bodies {
		switch b.mode {
		case modeLoop:
			modes[b.name] = "loop"
		case modeRegions:
			modes[b.name] = "regions"
		default:
			modes[b.name] = "fiber: " + b.why
		}
	}
	return modes
}

// What the transform leaves to the fibers, and why.
func TestRegionsFallBack(t *testing.T) {
	for _, tt := range []struct{ name, body, why string }{
		{"thread-dependent if", `if (threadIdx.x < 32) { p[0] = 1; __syncthreads(); }`, "the if around a barrier at line 1 is not block-uniform (the thread's index)"},
		{"thread-dependent loop", `int t = threadIdx.x; for (int k = 0; k < t; k++) __syncthreads();`, "the for around a barrier at line 1 is not block-uniform (the thread's index)"},
		{"condition on a slot", `int v = p[threadIdx.x]; __syncthreads(); while (v > 0) { __syncthreads(); }`, "the while around a barrier at line 1 is not block-uniform (v)"},
		{"a call in a condition", `if (f()) { __syncthreads(); }`, "the if around a barrier at line 1 is not block-uniform (f)"},
		{"barrier in a switch", `switch (blockIdx.x) { case 0: __syncthreads(); }`, "a barrier inside a switch at line 1"},
		{"barrier in an expression", `p[0] = (__syncthreads(), 1);`, "a barrier inside a expression at line 1"},
		{"warp vote", `p[0] = __ballot(p[0]); __syncthreads();`, "warp function __ballot at line 1"},
		{"shuffle behind a thread-dependent if with an else", `int v = p[0]; if (threadIdx.x < 32) { v += __shfl_down(v, 1); } else { v = 0; } p[0] = v;`, "the if around a barrier at line 1 is not block-uniform (the thread's index)"},
		{"barrier and shuffle behind a thread-dependent if", `int v = p[0]; if (threadIdx.x < 32) { v += __shfl_down(v, 1); __syncthreads(); } p[0] = v;`, "the if around a barrier at line 1 is not block-uniform (the thread's index)"},
		{"shuffle in an else inside a thread-dependent if", `int v = p[0]; if (threadIdx.x < 32) { if (v > 0) v = 0; else v += __shfl_down(v, 1); } p[0] = v;`, "the if around a barrier at line 1 is not block-uniform (v)"},
		{"shuffle and return", `if (threadIdx.x > n) return; p[0] = __shfl_down(p[0], 1);`, "return in a kernel with warp shuffles"},
		{"shuffled value with effects", `int v = 0; p[0] = __shfl_down(v++, 1);`, "a shuffled value with effects at line 1"},
		{"syncthreads_count", `p[0] = __syncthreads_count(1);`, "__syncthreads_count at line 1"},
		{"break out of a region", `for (int k = 0; k < 4; k++) { if (p[k]) break; __syncthreads(); }`, "break or continue out of a region at line 1"},
		{"assigned parameter", `n += 1; __syncthreads();`, "assigns its parameter n at line 1"},
		{"auto across a barrier", `auto v = p[threadIdx.x]; __syncthreads(); p[0] = v;`, "v lives across a barrier, declared auto at line 1"},
		{"goto", `__syncthreads(); goto out; out: p[0] = 1;`, "goto at line 1"},
		{"lambda", `auto g = [&](int x) { return x; }; __syncthreads(); p[0] = g(1);`, "a lambda at line 1"},
		{"loop variable assigned in a region", `for (int k = 0; k < 4; k++) { k += p[0]; __syncthreads(); }`, "assigns the loop variable k at line 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := `int f(); extern "C" __global__ void k(int* p, int n) { ` + tt.body + ` }`
			assert.Equal(t, map[string]string{"k": "fiber: " + tt.why}, EntryModes(src))
		})
	}
}

// A barrier or warp function the scan cannot see inside an entry (a __device__ function,
// a macro, a header) runs every entry as fibers; entries without barriers run as loops
// otherwise, whatever the others do.
func TestRegionsPerEntry(t *testing.T) {
	both := `extern "C" __global__ void plain(int* p) { p[threadIdx.x] = 1; }
extern "C" __global__ void sync(int* p) { p[threadIdx.x] = 1; __syncthreads(); p[0] = 2; }
extern "C" __global__ void warp(int* p) { p[threadIdx.x] = __shfl_xor(p[threadIdx.x], 1); }
extern "C" __global__ void vote(int* p) { p[threadIdx.x] = __any(p[threadIdx.x]); }
`
	assert.Equal(t, map[string]string{"plain": "loop", "sync": "regions", "warp": "regions", "vote": "fiber: warp function __any at line 4"}, EntryModes(both))

	helper := `__device__ void wait() { __syncthreads(); }
extern "C" __global__ void plain(int* p) { p[threadIdx.x] = 1; wait(); }
extern "C" __global__ void sync(int* p) { __syncthreads(); }
`
	assert.Equal(t, map[string]string{"plain": "fiber: __syncthreads outside the entries' bodies", "sync": "fiber: __syncthreads outside the entries' bodies"}, EntryModes(helper))

	macro := "#define SYNC __syncthreads()\nextern \"C\" __global__ void k(int* p) { p[0] = 1; SYNC; }\n"
	assert.Equal(t, map[string]string{"k": "fiber: __syncthreads in a macro"}, EntryModes(macro))

	p := scan(both)
	p.withHeaders([]header{{"h.h", "__device__ void w() { __syncthreads(); }"}})
	for _, b := range p.bodies {
		assert.Equal(t, modeFiber, b.mode, b.name)
	}
	assert.Contains(t, p.rewritten, "CUBEHIP_FIBER_END")
	assert.NotContains(t, p.rewritten, "CUBEHIP_REGION")

	t.Setenv("CUBEHIP_CPU_REGIONS", "0")
	assert.Equal(t, "fiber: CUBEHIP_CPU_REGIONS=0", EntryModes(both)["sync"])
}

// The rewrite keeps every line where it was, so compiler messages point at the user's.
func TestRegionsKeepLines(t *testing.T) {
	src := "extern \"C\" __global__ void k(int* p, int n) {\n\tint t = threadIdx.x;\n\tint v = p[t];\n\t__syncthreads();\n\tfor (int k = 0; k < n; k++) {\n\t\tp[t] += v;\n\t\t__syncthreads();\n\t}\n\tp[t] = v + t;\n}\n"
	p := scan(src)
	assert.Equal(t, modeRegions, p.bodies[0].mode, p.bodies[0].why)
	assert.Equal(t, strings.Count(src, "\n"), strings.Count(p.rewritten, "\n"))
	lines := strings.Split(p.rewritten, "\n")
	assert.Contains(t, lines[5], "p[t] += v;")
	assert.Contains(t, lines[8], "p[t] = v + t;")
}

// A block-level loop holding warp shuffles is unrolled (its shuffles' distances become
// constants); one holding only barriers is left to GCC.
func TestRegionsUnrollShuffleLoops(t *testing.T) {
	src := `extern "C" __global__ void k(float* p, int n) {
	__shared__ float s[256];
	float v = p[threadIdx.x];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	s[threadIdx.x] = v;
	for (int k = 1; k < n; k *= 2) { __syncthreads(); s[threadIdx.x] += 1.0f; }
	p[threadIdx.x] = s[threadIdx.x];
}`
	p := scan(src)
	assert.Equal(t, modeRegions, p.bodies[0].mode, p.bodies[0].why)
	assert.Contains(t, p.rewritten, `_Pragma("GCC unroll 8") for (int o = warpSize / 2;`)
	assert.Equal(t, 1, strings.Count(p.rewritten, "GCC unroll"))
}
