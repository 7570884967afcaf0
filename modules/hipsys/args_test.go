package hipsys

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
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
