package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNeedsName(t *testing.T) {
	src := `extern "C" __global__ void plain(float* y) {}
__global__ void scale(float* y, float a) {}
template <typename T, int N> __global__ void reduce(const T* in, T* out) {}
extern "C" {
__global__ void inblock(int* y) {}
}
__global__ void after(int* y) {}`
	for entry, want := range map[string]bool{
		"plain": false, "scale": true, "reduce<float, 256>": true, "inblock": false,
		"after": true, "missing": false, "ns::scale": true, "(void(*)(float*, float))scale": true,
	} {
		assert.Equal(t, want, needsName(src, entry), entry)
	}
	for expr, want := range map[string]string{
		"reduce<float, 256>": "reduce", "ns::scale": "scale", "(void(*)(float*, float))scale": "scale",
		"plain": "plain", "&plain": "plain", "a b": "",
	} {
		assert.Equal(t, want, declaredName(expr), expr)
	}
}

func TestEntrySignature(t *testing.T) {
	src := `__global__ void twice(float* y, int n);
__global__ void twice(float* y, int n) {}
__global__ void over(float* y) {}
__global__ void over(int* y) {}
template <typename T> __global__ void fill(T* out, T v, int n) {}`
	p, ok := entrySignature(src, "twice")
	assert.True(t, ok, "a declaration and its definition are one kernel")
	assert.Equal(t, cF32, p[0].elem)
	_, ok = entrySignature(src, "over")
	assert.False(t, ok, "which overload is the compiler's to say")
	p, ok = entrySignature(src, "(void(*)(int*))over")
	assert.True(t, ok)
	assert.Equal(t, cI32, p[0].elem, "the cast's parameters")
	p, ok = entrySignature(src, "fill<float>")
	assert.True(t, ok)
	assert.Equal(t, []string{"out", "v", "n"}, []string{p[0].name, p[1].name, p[2].name})
	assert.Equal(t, cUnknown, p[0].elem, "a template parameter's type is unknown")
	assert.Equal(t, cI32, p[2].ctype)
}
