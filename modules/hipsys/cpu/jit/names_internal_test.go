package jit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExprName(t *testing.T) {
	for expr, want := range map[string]string{
		"reduce<float, 256>":                "reduce",
		"ns::inner::reduce<float, (1 > 0)>": "reduce",
		"::scale":                           "scale",
		"&scale":                            "scale",
		"(scale)":                           "scale",
		"(void(*)(float*, int))scale":       "scale",
		"((void(*)(float*, int))ns::scale<float>)":    "scale",
		"static_cast<void(*)(float*)>(&ns::scale)":    "scale",
		"reinterpret_cast<void(*)(float*)>(scale<1>)": "scale",
		"&counter":                      "counter",
		"ns::Outer<int>::template k<2>": "k",
		"42":                            "",
		"":                              "",
	} {
		assert.Equal(t, want, exprName(expr), expr)
	}
}

// C++-linkage and template kernels, explicit specializations among them, are bodies to
// wrap when the program has name expressions, and never entries by their own names.
func TestScanCxxKernels(t *testing.T) {
	src := "template <typename T> __global__ void t(T* p) { p[threadIdx.x] = 1; }\n" +
		"template <> __global__ void t<int>(int* p) { p[threadIdx.x] = 2; }\n" +
		"template __global__ void t<float>(float*);\n" +
		"__global__ void c(int* p, int n) { p[n] = 3; }\n" +
		"extern \"C\" __global__ void e(int* p) { p[0] = 4; }\n"
	p := scanLive(src, nil, false)
	assert.Equal(t, []entry{{"e", "e"}}, p.entries)
	assert.Len(t, p.bodies, 1)

	p = scanLive(src, nil, true)
	assert.Equal(t, []entry{{"e", "e"}}, p.entries)
	var names []string
	for _, b := range p.bodies {
		names = append(names, b.name)
	}
	assert.Equal(t, []string{"t", "t", "c", "e"}, names)
	assert.Equal(t, []string{"p"}, p.bodies[1].params, "the specialization's parameters, not its template arguments")
	assert.Equal(t, []string{"p", "n"}, p.bodies[2].params)
	assert.Equal(t, 4, strings.Count(p.rewritten, "CUBEHIP_THREADS_BEGIN"))
}
