package hipsys

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const maxU = math.MaxUint64

func TestExtent(t *testing.T) {
	tests := []struct {
		pitch, width, height uint64
		span                 uint64
		ok                   bool
	}{
		{64, 32, 4, 3*64 + 32, true},
		{0, 0, 5, 0, true},
		{64, 32, 0, 0, true},
		{64, 64, 1, 64, true},
		{maxU, 1, 1, 1, true},             // one row never multiplies the pitch
		{maxU, maxU, 1, maxU, true},       // the last byte of the address space
		{1 << 63, 1 << 63, 2, 0, false},   // 2^63 + 2^63 wraps to 0
		{4, 4, 1 << 62, 0, false},         // (2^62-1)*4 + 4 = 2^64
		{4, 3, 1 << 62, maxU, true},       // one byte short of wrapping
		{1 << 32, 1, 1<<32 + 1, 0, false}, // the product alone overflows
		{maxU - 63, 64, 2, 0, false},      // a "negative" pitch: row 1 would land 64 bytes before row 0
	}
	for _, tc := range tests {
		span, ok := Extent(tc.pitch, tc.width, tc.height)
		assert.Equal(t, tc.ok, ok, "Extent(%d, %d, %d)", tc.pitch, tc.width, tc.height)
		if tc.ok {
			assert.Equal(t, tc.span, span, "Extent(%d, %d, %d)", tc.pitch, tc.width, tc.height)
		}
	}
}

// bigExtent is Extent without overflow, the oracle of the fuzz targets.
func bigExtent(pitch, width, height uint64) *big.Int {
	if width == 0 || height == 0 {
		return new(big.Int)
	}
	e := new(big.Int).SetUint64(height - 1)
	e.Mul(e, new(big.Int).SetUint64(pitch))
	return e.Add(e, new(big.Int).SetUint64(width))
}

var maxBig = new(big.Int).SetUint64(maxU)

func FuzzExtent(f *testing.F) {
	f.Add(uint64(64), uint64(32), uint64(4))
	f.Add(uint64(1<<63), uint64(1<<63), uint64(2))
	f.Add(uint64(4), uint64(4), uint64(1<<62))
	f.Add(uint64(maxU-63), uint64(64), uint64(2))
	f.Fuzz(func(t *testing.T, pitch, width, height uint64) {
		span, ok := Extent(pitch, width, height)
		want := bigExtent(pitch, width, height)
		if fits := want.Cmp(maxBig) <= 0; ok != fits {
			t.Fatalf("Extent(%d, %d, %d) ok=%v, but the span is %s", pitch, width, height, ok, want)
		}
		if ok && want.Uint64() != span {
			t.Fatalf("Extent(%d, %d, %d) = %d, want %s", pitch, width, height, span, want)
		}
	})
}

func TestCheckRange(t *testing.T) {
	assert.NoError(t, CheckRange("cpu", "hipMemset", "dst", maxU, 0))
	assert.NoError(t, CheckRange("cpu", "hipMemset", "dst", maxU, 1), "the last byte of the address space")
	assert.NoError(t, CheckRange("cpu", "hipMemset", "dst", 0x1000, maxU-0xfff))
	err := CheckRange("cpu", "hipMemset", "dst", 0x1000, maxU-0xffe)
	requireHIPError(t, err, "hipMemset", ErrorInvalidValue, "dst 0x1000 + 18446744073709547521 bytes runs past the end of the address space")
	err = CheckRange("amd", "hipMemcpyDtoD", "src", maxU, 2)
	requireHIPError(t, err, "hipMemcpyDtoD", ErrorInvalidValue, "src 0xffffffffffffffff")
}

func requireHIPError(t *testing.T, err error, call string, status Status, detail string) {
	t.Helper()
	var he *Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, call, he.Call)
	assert.Equal(t, status, he.Status, "%v", err)
	assert.Contains(t, he.Detail, detail)
}

func TestCopy2DCheck(t *testing.T) {
	good := Copy2D{Dst: 0x10000, DstPitch: 160, Src: 0x20000, SrcPitch: 128, Width: 100, Height: 7, Kind: MemcpyDeviceToDevice}
	dst, src, err := good.Check("cpu", "hipMemcpy2D")
	require.NoError(t, err)
	assert.Equal(t, uint64(6*160+100), dst)
	assert.Equal(t, uint64(6*128+100), src)

	tests := []struct {
		name   string
		edit   func(c *Copy2D)
		status Status
		detail string
	}{
		{"kind", func(c *Copy2D) { c.Kind = 5 }, ErrorInvalidMemcpyDirection, "Kind 5"},
		{"negative kind", func(c *Copy2D) { c.Kind = -1 }, ErrorInvalidMemcpyDirection, "Kind -1"},
		{"null dst", func(c *Copy2D) { c.Dst = 0 }, ErrorInvalidValue, "Dst is null"},
		{"null src", func(c *Copy2D) { c.Src = 0 }, ErrorInvalidValue, "Src is null"},
		{"zero dst pitch", func(c *Copy2D) { c.DstPitch = 0 }, ErrorInvalidPitchValue, "DstPitch 0 is smaller than Width 100"},
		{"src pitch under width", func(c *Copy2D) { c.SrcPitch = 99 }, ErrorInvalidPitchValue, "SrcPitch 99"},
		{"wrapping dst pitch", func(c *Copy2D) { c.DstPitch, c.Width, c.Height = maxU-63, 64, 2 }, ErrorInvalidValue,
			"Height 2 rows of DstPitch 18446744073709551552 bytes overflow 64 bits"},
		{"oversized rows", func(c *Copy2D) { c.DstPitch, c.SrcPitch, c.Width, c.Height = 1<<63, 1<<63, 1<<63, 2 }, ErrorInvalidValue, "DstPitch"},
		{"height 2^62", func(c *Copy2D) { c.DstPitch, c.SrcPitch, c.Width, c.Height = 4, 4, 4, 1<<62 }, ErrorInvalidValue, "Height 4611686018427387904 rows"},
		{"src overflow only", func(c *Copy2D) { c.SrcPitch, c.Height = 1<<62, 5 }, ErrorInvalidValue, "SrcPitch"},
		{"dst past the address space", func(c *Copy2D) { c.Dst = maxU - 100 }, ErrorInvalidValue, "Dst 0xffffffffffffff9b"},
		{"src past the address space", func(c *Copy2D) { c.Src = maxU - 800 }, ErrorInvalidValue, "Src 0x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			_, _, err := c.Check("amd", "hipMemcpy2DAsync")
			requireHIPError(t, err, "hipMemcpy2DAsync", tc.status, tc.detail)
			assert.Equal(t, "amd", err.(*Error).Platform)
		})
	}

	for _, empty := range []Copy2D{{Width: 0, Height: 1 << 62}, {Width: 1 << 62, Height: 0, Kind: MemcpyDefault}} {
		d, s, err := empty.Check("cpu", "hipMemcpy2D")
		assert.NoError(t, err, "a copy of nothing is valid whatever its pointers and pitches (%+v)", empty)
		assert.Zero(t, d+s)
	}
}

// Every Copy2D either passes Check with spans that are the exact, unwrapped extents and
// stay inside the address space, or fails with one of the statuses Check documents.
func FuzzCopy2DCheck(f *testing.F) {
	f.Add(uint64(0x10000), uint64(160), uint64(0x20000), uint64(128), uint64(100), uint64(7), int32(3))
	f.Add(uint64(0x10000), uint64(maxU-63), uint64(0x20000), uint64(64), uint64(64), uint64(2), int32(3))
	f.Add(uint64(0x10000), uint64(1<<63), uint64(0x20000), uint64(1<<63), uint64(1<<63), uint64(2), int32(1))
	f.Add(uint64(0x10000), uint64(4), uint64(0x20000), uint64(4), uint64(4), uint64(1<<62), int32(4))
	f.Fuzz(func(t *testing.T, dst, dpitch, src, spitch, width, height uint64, kind int32) {
		c := Copy2D{Dst: uintptr(dst), DstPitch: dpitch, Src: uintptr(src), SrcPitch: spitch, Width: width, Height: height, Kind: MemcpyKind(kind)}
		ds, ss, err := c.Check("cpu", "hipMemcpy2D")
		if err != nil {
			var he *Error
			if !assert.ErrorAs(t, err, &he) {
				return
			}
			assert.Contains(t, []Status{ErrorInvalidValue, ErrorInvalidPitchValue, ErrorInvalidMemcpyDirection}, he.Status)
			return
		}
		if width == 0 || height == 0 {
			assert.Zero(t, ds+ss)
			return
		}
		assert.GreaterOrEqual(t, dpitch, width)
		assert.GreaterOrEqual(t, spitch, width)
		for _, side := range []struct {
			addr, pitch, span uint64
		}{{dst, dpitch, ds}, {src, spitch, ss}} {
			want := bigExtent(side.pitch, width, height)
			assert.Equal(t, want.String(), new(big.Int).SetUint64(side.span).String())
			end := new(big.Int).Add(new(big.Int).SetUint64(side.addr), want)
			assert.LessOrEqual(t, end.Cmp(new(big.Int).Add(maxBig, big.NewInt(1))), 0, "the span ends inside the address space")
		}
	})
}
