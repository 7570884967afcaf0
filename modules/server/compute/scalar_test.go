package compute

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// An Order re-lays a block the launch packed buffers-first into the kernel's declared
// order, each parameter at its natural alignment: what a compiler lays out for
// f(char c, double* p, short s, int i, double* q, struct{char[3]} r, double d).
func TestOrderLaysTheKernelsSequence(t *testing.T) {
	var a hipsys.KernelArgs
	a.Ptr(0x1111).Ptr(0x2222) // the launch packs the buffers' pointers first
	o := &Order{
		Params:  []Param{{Index: 0}, {Buffer: true, Index: 0}, {Index: 1}, {Index: 2}, {Buffer: true, Index: 1}, {Index: 3}, {Index: 4}},
		Scalars: []Scalar{I8(-2), I16(-3), I32(7), Raw([]byte{1, 2, 3}, 1), F64(0.5)},
	}
	Ordered(o).append(&a)
	assert.Equal(t, []uint32{0, 8, 16, 20, 24, 32, 40}, a.Offsets())
	b := a.Buffer()
	assert.Equal(t, byte(0xFE), b[0])
	assert.Equal(t, uint64(0x1111), binary.LittleEndian.Uint64(b[8:]))
	assert.Equal(t, uint16(0xFFFD), binary.LittleEndian.Uint16(b[16:]))
	assert.Equal(t, uint32(7), binary.LittleEndian.Uint32(b[20:]))
	assert.Equal(t, uint64(0x2222), binary.LittleEndian.Uint64(b[24:]))
	assert.Equal(t, []byte{1, 2, 3}, b[32:35])
	assert.Equal(t, uint64(0x3FE0000000000000), binary.LittleEndian.Uint64(b[40:]))

	// Each scalar's width and name, as a launch's argument error reports them.
	for _, c := range []struct {
		s    Scalar
		size uint32
		name string
	}{
		{I8(0), 1, "int8"}, {U8(0), 1, "uint8"}, {I16(0), 2, "int16"}, {U16(0), 2, "uint16"},
		{I32(0), 4, "int32"}, {U32(0), 4, "uint32"}, {F32(0), 4, "float32"},
		{I64(0), 8, "int64"}, {U64(0), 8, "uint64"}, {F64(0), 8, "float64"},
		{Raw(make([]byte, 12), 4), 12, "12-byte struct"},
	} {
		assert.Equal(t, c.size, c.s.Size(), c.name)
		assert.Equal(t, c.name, c.s.String())
	}
}
