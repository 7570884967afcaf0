package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The declarations kernels are written with: qualifiers, restrict, arrays, comments,
// several kernels and a call of the entry before its definition.
func TestParseSignature(t *testing.T) {
	src := `// void saxpy(int) in a comment is not the kernel
__device__ float twice(float v) { return 2 * v; }
void host() { k(1, 2); }
/* a block comment: __global__ void k(double) */
extern "C" __global__ void __launch_bounds__(256) k(const volatile long long n,
        unsigned a, size_t b, const float* __restrict__ x, float y[], double*out,
        std::uint32_t c, uint d, Pair p, bool on, signed char s)
{ }`
	params, ok := parseSignature(src, "k")
	assert.True(t, ok)
	type want struct {
		name  string
		ctype cType
		ptr   bool
		ro    bool
	}
	var got []want
	for _, p := range params {
		got = append(got, want{p.name, p.ctype, p.pointer, p.readOnly})
	}
	assert.Equal(t, []want{
		{"n", cI64, false, false}, {"a", cU32, false, false}, {"b", cU64, false, false},
		{"x", cUnknown, true, true}, {"y", cUnknown, true, false}, {"out", cUnknown, true, false},
		{"c", cU32, false, false}, {"d", cU32, false, false}, {"p", cUnknown, false, false},
		{"on", cBool, false, false}, {"s", cI8, false, false},
	}, got)
	assert.Equal(t, []Access{Read, ReadWrite, ReadWrite}, inferIO(params))
	assert.Equal(t, "const float* __restrict__ x", params[3].text)

	for _, c := range []struct{ src, entry string }{
		{`#define K(name) extern "C" __global__ void name(int n)
K(k) {}`, "k"},
		{`extern "C" __global__ void k(int n`, "k"},
		{`void k(int n) {}`, "k"},
		{`extern "C" __global__ void k(int n) {}`, "k("},
	} {
		_, ok := parseSignature(c.src, c.entry)
		assert.False(t, ok, "%q", c.src)
	}
	params, ok = parseSignature(`extern "C" __global__ void k(void) {}`, "k")
	assert.True(t, ok)
	assert.Empty(t, params)
	params, ok = parseSignature(`extern "C" __global__ void k(int, float*) {}`, "k")
	assert.True(t, ok)
	assert.Equal(t, cI32, params[0].ctype)
	assert.Equal(t, "", params[0].name)
	assert.True(t, params[1].pointer)
}

// A pointer's element type: a scalar, a vector type's component, a 16-bit float, an
// address for a pointer to pointers, unknown where the declaration cannot say; and
// which Go slices' buffers each takes.
func TestPointeeTypes(t *testing.T) {
	src := `extern "C" __global__ void k(const float* a, double2* b, const __half* c, __hip_bfloat16* d,
        float** e, int* f[], uchar4* g, hipDoubleComplex* h, T* i, void* j, const unsigned char* l)`
	params, ok := parseSignature(src, "k")
	assert.True(t, ok)
	var got []cType
	for _, p := range params {
		got = append(got, p.elem)
	}
	assert.Equal(t, []cType{cF32, cF64, cF16, cBF16, cU64, cU64, cU8, cF64, cUnknown, cUnknown, cU8}, got)

	for _, c := range []struct {
		elem, held cType
		ok         bool
	}{
		{cF32, cF32, true}, {cF32, cI32, false}, {cF32, cF64, false}, {cI32, cU32, true},
		{cF16, cU16, true}, {cF16, cI16, true}, {cF16, cF32, false}, {cBF16, cU16, true}, {cBF16, cU32, false},
		{cU64, cI64, true}, {cU64, cF64, false}, {cU8, cF64, true}, {cUnknown, cF32, true},
	} {
		assert.Equal(t, c.ok, aliases(c.elem, c.held), "%s* given %s", cNames[c.elem], goNames[c.held])
	}
}
