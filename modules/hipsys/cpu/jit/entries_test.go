package jit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScanFindsEntries(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []entry
	}{
		{"plain", `extern "C" __global__ void k(float* p) {}`, []entry{{"k", "k"}}},
		{"launch bounds after", `extern "C" __global__ void __launch_bounds__(256, 2) k(int n) {}`, []entry{{"k", "k"}}},
		{"launch bounds before", `__launch_bounds__(128) extern "C" __global__ void k() {}`, []entry{{"k", "k"}}},
		{"attribute", `extern "C" __global__ __attribute__((noinline)) void k() {}`, []entry{{"k", "k"}}},
		{"extern C block", "extern \"C\" {\n__global__ void a() {}\n__global__ void b(int) {}\n}", []entry{{"a", "a"}, {"b", "b"}}},
		{"namespace", `namespace ns { namespace inner { extern "C" __global__ void k() {} } }`, []entry{{"k", "::ns::inner::k"}}},
		{"declared then defined", `extern "C" __global__ void k(); extern "C" __global__ void k() {}`, []entry{{"k", "k"}}},
		{"C++ linkage is not an entry", `__global__ void mangled(int* p) {}`, nil},
		{"template is not an entry", `template <int N> __global__ void t(int* p) {}`, nil},
		{"comment and string", "// extern \"C\" __global__ void c() {}\n/* extern \"C\" __global__ void d() {} */ const char* s = \"__global__ void e()\";", nil},
		{"macro line", "#define K extern \"C\" __global__ void m() {}\n", nil},
		{"after a function body", `__device__ int f() { return 1; } extern "C" __global__ void k() {}`, []entry{{"k", "k"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scan(tt.src).entries)
		})
	}
}

func TestScanBarrier(t *testing.T) {
	assert.True(t, scan(`extern "C" __global__ void k() { __syncthreads(); }`).barrier)
	assert.False(t, scan(`extern "C" __global__ void k() { /* __syncthreads(); */ }`).barrier)
}

func TestRewriteSharedKeepsLines(t *testing.T) {
	src := "extern __shared__ float top[];\n" +
		"extern \"C\" __global__ void k() {\n" +
		"  extern __shared__ __align__(16)\n    unsigned int local[];\n" +
		"  local[0] = 1;\n}\n"
	p := scan(src)
	assert.True(t, p.dynShared)
	assert.Equal(t, strings.Count(src, "\n"), strings.Count(p.rewritten, "\n"))
	assert.Contains(t, p.rewritten, "static const ::cubehip::dyn_ptr<float> top{};")
	assert.Contains(t, p.rewritten, "  unsigned int* const local = reinterpret_cast<unsigned int*>(cubehip_dyn_shared);\n\n  local[0] = 1;")
}

// The type may come before __shared__ (`extern float __shared__ s[];`): the same
// declaration, rewritten the same way; other extern declarations are left alone.
func TestRewriteSharedTypeFirst(t *testing.T) {
	src := "extern unsigned int __shared__ top[];\nextern int counter;\n" +
		"extern \"C\" __global__ void k() {\n  extern __align__(16) float __shared__ local[];\n  local[0] = top[0];\n}\n"
	p := scan(src)
	assert.True(t, p.dynShared)
	assert.Contains(t, p.rewritten, "static const ::cubehip::dyn_ptr<unsigned int> top{};")
	assert.Contains(t, p.rewritten, "extern int counter;")
	assert.Contains(t, p.rewritten, "  float* const local = reinterpret_cast<float*>(cubehip_dyn_shared);")
}

func TestCompilerFlags(t *testing.T) {
	opt, flags := compilerFlags([]string{"-O2", "--offload-arch=gfx90a", "-fgpu-rdc", "--gpu-architecture=sm_90",
		"-DA=1", "-D", "B", "-UC", "-std=c++20", "--std=c++14", "-ffast-math", "-I/abs/inc"})
	assert.Equal(t, "-O2", opt)
	assert.Equal(t, []string{"-DA=1", "-DB", "-UC", "-std=c++20", "-ffast-math", "-I/abs/inc"}, flags)
}

func TestDecodeImageRoundTrip(t *testing.T) {
	im := &image{flags: flagBarrier, entries: []string{"a", "bb"}, object: []byte("\x7fELF rest")}
	got, err := decodeImage(im.encode())
	assert.NoError(t, err)
	assert.Equal(t, im, got)
}

func FuzzDecodeImage(f *testing.F) {
	f.Add((&image{entries: []string{"k"}, object: []byte("\x7fELF")}).encode())
	f.Add([]byte(imageMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeImage(b) // must not panic
	})
}

func FuzzScan(f *testing.F) {
	f.Add(`extern "C" __global__ void k(float* p) { extern __shared__ float s[]; __syncthreads(); }`)
	f.Fuzz(func(t *testing.T, src string) {
		p := scan(src) // must not panic, and must keep the line count
		if strings.Count(p.rewritten, "\n") != strings.Count(src, "\n") {
			t.Fatalf("line count changed")
		}
	})
}

func TestRewriteWrapsEntryBodies(t *testing.T) {
	src := "extern \"C\" __global__ void k(int* p) __launch_bounds__(64) {\n  p[threadIdx.x] = 1;\n}\n" +
		"extern \"C\" __global__ void decl(int* p);\n" +
		"__device__ int f() { return 2; }\n"
	p := scan(src)
	assert.Equal(t, []entry{{"k", "k"}}, p.entries, "a declaration without a body is not an entry")
	assert.Equal(t, "extern \"C\" __global__ void k(int* p) __launch_bounds__(64) { CUBEHIP_THREADS_BEGIN \n  p[threadIdx.x] = 1;\n CUBEHIP_THREADS_END }\n"+
		"extern \"C\" __global__ void decl(int* p);\n__device__ int f() { return 2; }\n", p.rewritten)
	assert.False(t, p.tlsBuiltins)
}

func TestBuiltinsOutsideEntryBodies(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want bool
	}{
		{"only in entries", `extern "C" __global__ void k(int* p) { p[blockIdx.x * blockDim.x + hipThreadIdx_x] = gridDim.x; }`, false},
		{"device function", `__device__ int id() { return threadIdx.x; } extern "C" __global__ void k(int* p) { p[id()] = 0; }`, true},
		{"macro", "#define ID (threadIdx.x)\nextern \"C\" __global__ void k(int* p) { p[ID] = 0; }", true},
		{"comment", "// threadIdx\nextern \"C\" __global__ void k(int* p) { p[0] = 0; }", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scan(tt.src).tlsBuiltins)
		})
	}
}

func TestMainFileLines(t *testing.T) {
	out := "# 0 \"k.hip\"\n# 1 \"<command-line>\"\nint x;\n# 1 \"k.hip\"\n#pragma once\n\n# 5 \"k.hip\"\nextern \"C\" void live() {}\n# 3 \"other.h\" 1\nvoid h();\n"
	assert.Equal(t, map[int]bool{1: true, 5: true}, mainFileLines(out, "k.hip"))
}

func TestScanLiveSkipsRemovedLines(t *testing.T) {
	src := "#if 0\nextern \"C\" __global__ void dead(int* p) { extern __shared__ int s[]; }\n#endif\nextern \"C\" __global__ void live(int* p) {}\n"
	p := scanLive(src, map[int]bool{4: true}, false)
	assert.Equal(t, []entry{{"live", "live"}}, p.entries)
	assert.Empty(t, p.shared)
	assert.Len(t, p.bodies, 1)
}

func TestScanSeesWarpFunctionsAndBarriersInMacros(t *testing.T) {
	p := scan("#define REDUCE(v) v += __shfl_down(v, 1)\n#define SYNC \\\n  __syncthreads()\nextern \"C\" __global__ void k(int* a) { int v = a[0]; REDUCE(v); SYNC; a[0] = v; }\n")
	assert.True(t, p.warps)
	assert.True(t, p.barrier)
	p = scan("#include <hip/hip_runtime.h>\n#define N 4\nextern \"C\" __global__ void k(int* a) { a[0] = N; }\n")
	assert.False(t, p.warps)
	assert.False(t, p.barrier)
}
