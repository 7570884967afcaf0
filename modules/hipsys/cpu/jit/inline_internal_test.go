package jit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A shuffle helper is inlined where every call is a statement of an entry and its names
// mean the same there; otherwise nothing is inlined and the module runs as fibers, as a
// shuffle outside the entries always did.
func TestInlineHelpers(t *testing.T) {
	const helper = `__device__ inline float warp_sum(float v) {
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	return v;
}
`
	// Not inlined: the fibers, and the debug log's reason says which call kept the helper.
	const statement = "not a statement `x = f(...)` of its own, or its body names what the entry declares"
	hidden := func(name string, line int, why string) string {
		return fmt.Sprintf("fiber: __shfl_down outside the entries' bodies (%s not inlined: %s)", name, fmt.Sprintf(why, line))
	}
	call := "its call at line %d is " + statement
	outside := "named outside the entries at line %d"
	for _, tt := range []struct{ name, src, want string }{
		{"assigned", helper + `extern "C" __global__ void k(float* p) { float v = p[threadIdx.x]; v = warp_sum(v); p[threadIdx.x] = v; }`, "regions"},
		{"declared", helper + `extern "C" __global__ void k(float* p) { float s = warp_sum(p[threadIdx.x]); p[threadIdx.x] = s; }`, "regions"},
		{"two parameters", `__device__ float lanes(float v, int o) { return __shfl_down(v, o); }
extern "C" __global__ void k(float* p) { float s = lanes(p[threadIdx.x], 2); p[threadIdx.x] = s; }`, "regions"},
		{"a call in an expression", helper + `extern "C" __global__ void k(float* p) { p[threadIdx.x] = warp_sum(p[threadIdx.x]) + 1; }`, hidden("warp_sum", 5, call)},
		{"a const result", helper + `extern "C" __global__ void k(float* p) { const float s = warp_sum(p[0]); p[threadIdx.x] = s; }`, hidden("warp_sum", 5, call)},
		{"the body of an unbraced if", helper + `extern "C" __global__ void k(float* p) { float s = 0; if (p[0] > 0) s = warp_sum(s); p[threadIdx.x] = s; }`, hidden("warp_sum", 5, call)},
		{"a name the entry declares", `__device__ float scale = 2;
__device__ float scaled(float v) { return __shfl_down(v, 1) * scale; }
extern "C" __global__ void k(float* p) { float scale = p[1]; float s = scaled(p[0]); p[threadIdx.x] = s + scale; }`, hidden("scaled", 3, call)},
		{"a reference parameter", `__device__ float warp_add(float& v) { v += __shfl_down(v, 1); return v; }
extern "C" __global__ void k(float* p) { float v = p[0]; float s = warp_add(v); p[threadIdx.x] = s; }`, "fiber: __shfl_down outside the entries' bodies"},
		{"two returns", `__device__ float first(float v) { if (v > 0) return v; return __shfl_down(v, 1); }
extern "C" __global__ void k(float* p) { float s = first(p[0]); p[threadIdx.x] = s; }`, "fiber: __shfl_down outside the entries' bodies"},
		{"a prototype", "__device__ inline float warp_sum(float v);\n" + helper + `extern "C" __global__ void k(float* p) { float s = warp_sum(p[0]); p[threadIdx.x] = s; }`, hidden("warp_sum", 1, outside)},
		{"called from another helper", helper + `__device__ float twice(float v) { float w = warp_sum(v); return 2 * w; }
extern "C" __global__ void k(float* p) { float s = warp_sum(p[0]); p[threadIdx.x] = s + twice(p[1]); }`, hidden("warp_sum", 5, outside)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, map[string]string{"k": tt.want}, EntryModes(tt.src))
		})
	}
}

// Inlining keeps every line where it was: a compile error still points at the user's line.
func TestInlineHelpersKeepLines(t *testing.T) {
	src := "__device__ inline int warp_sum(int v) {\n\tv += __shfl_down(v, 16);\n\treturn v;\n}\nextern \"C\" __global__ void k(int* p) {\n\tint v = p[0];\n\tv = warp_sum(\n\t\tv);\n\tp[1] = v;\n}\n"
	out, why := inlineHelpers(src)
	assert.Empty(t, why)
	assert.NotEqual(t, src, out)
	assert.Equal(t, strings.Count(src, "\n"), strings.Count(out, "\n"))
	assert.Contains(t, strings.Split(out, "\n")[6], "__cubehip_i0_v = v;")
	assert.Equal(t, "\tp[1] = v;", strings.Split(out, "\n")[8])
}
