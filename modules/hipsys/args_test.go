package hipsys

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The packed block follows C's layout rules: each argument at its natural alignment,
// and every argument's offset and size recorded for the platforms' checks.
func TestKernelArgsLayout(t *testing.T) {
	var a KernelArgs
	a.Ptr(0x1000).I32(-2).F64(1.5).U32(7).Raw([]byte{1, 2, 3}, 2).F32(2).I64(-1)
	assert.Equal(t, 7, a.Len())
	assert.Equal(t, []uint32{0, 8, 16, 24, 28, 32, 40}, a.Offsets())
	assert.Equal(t, []uint32{8, 4, 8, 4, 3, 4, 8}, a.Sizes())
	b := a.Buffer()
	assert.Len(t, b, 48)
	assert.Equal(t, []byte{0, 0x10, 0, 0, 0, 0, 0, 0}, b[0:8])
	assert.Equal(t, []byte{0xfe, 0xff, 0xff, 0xff}, b[8:12])
	assert.Equal(t, math.Float64bits(1.5), le64(b[16:24]))
	assert.Equal(t, []byte{1, 2, 3}, b[28:31])
	assert.Equal(t, uint64(math.Float32bits(2)), le64(append(b[32:36:36], 0, 0, 0, 0)))

	a.Reset()
	assert.Zero(t, a.Len())
	assert.Empty(t, a.Sizes())
	assert.Empty(t, a.Buffer())
	a.U64(9)
	assert.Equal(t, []uint32{8}, a.Sizes(), "Reset forgets the old sizes")

	var bad KernelArgs
	bad.U32(1).Raw([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 3) // not a power of two: 8-aligned
	assert.Equal(t, []uint32{0, 8}, bad.Offsets())
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// CheckArgs refuses a count or a size that differs from the kernel's parameters,
// naming the kernel, the argument and what the parameter takes, and takes a match,
// nil args for a kernel without parameters included, without allocating.
func TestCheckArgs(t *testing.T) {
	want := []uint32{8, 8, 4} // saxpy-like: two pointers and an int
	cases := []struct {
		name   string
		args   *KernelArgs
		detail string
	}{
		{"one pointer for three parameters", new(KernelArgs).Ptr(1), "kernel k takes 3 arguments, got 1"},
		{"nil for three parameters", nil, "kernel k takes 3 arguments, got 0"},
		{"one too many", new(KernelArgs).Ptr(1).Ptr(2).I32(3).I32(4), "kernel k takes 3 arguments, got 4"},
		{"an I64 for the int", new(KernelArgs).Ptr(1).Ptr(2).I64(3), "argument 2 of kernel k is 8 bytes; the parameter takes 4"},
		{"an int for a pointer", new(KernelArgs).I32(1).Ptr(2).I32(3), "argument 0 of kernel k is 4 bytes; the parameter takes 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckArgs("plat", "k", want, c.args)
			var he *Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, ErrorInvalidValue, he.Status)
			assert.Equal(t, "hipModuleLaunchKernel", he.Call)
			assert.Equal(t, "plat", he.Platform)
			assert.Equal(t, c.detail, he.Detail)
		})
	}
	ok := new(KernelArgs).Ptr(1).Ptr(2).I32(3)
	assert.NoError(t, CheckArgs("plat", "k", want, ok))
	assert.NoError(t, CheckArgs("plat", "k", nil, nil), "no parameters, no arguments")
	assert.NoError(t, CheckArgs("plat", "k", []uint32{}, new(KernelArgs)))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = CheckArgs("plat", "k", want, ok) }))

	assert.Equal(t, []uint32{8, 4, 24}, ParamSizes([]KernelParam{{Size: 8}, {Offset: 8, Size: 4}, {Offset: 16, Size: 24}}))
}
