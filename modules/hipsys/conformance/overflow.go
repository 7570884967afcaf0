package conformance

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// copyOverflow holds every platform to the same answer for copies whose numbers wrap
// around 64 bits: hipErrorInvalidValue (or hipErrorInvalidPitchValue for a pitch under
// the width) before any byte moves. Unchecked, a pitched copy whose last row's end wraps
// past 2^64 looks small enough for its allocation, and then writes through the
// neighbouring ones, crashes on an oversized row, or loops for hours over 2^62 rows. The
// checks need no driver state (hipsys.Copy2D.Check), so they hold on GPU platforms too,
// and the allocations beside the target are compared byte for byte afterwards.
func (s *suite) copyOverflow(t *testing.T) {
	const n = 4096
	left, target, right := s.upload(t, pattern(n, 1)), s.upload(t, pattern(n, 2)), s.upload(t, pattern(n, 3))
	host := s.hostMalloc(t, n)
	copy(host.Bytes(n), pattern(n, 4))
	st := s.stream(t, hipsys.StreamNonBlocking)
	inval, pitch := hipsys.ErrorInvalidValue, hipsys.ErrorInvalidPitchValue

	d2 := func(dst hipsys.DevicePtr, dpitch uint64, src uintptr, spitch, width, height uint64, kind hipsys.MemcpyKind) hipsys.Copy2D {
		return hipsys.Copy2D{Dst: uintptr(dst), DstPitch: dpitch, Src: src, SrcPitch: spitch, Width: width, Height: height, Kind: kind}
	}
	const maxU = math.MaxUint64
	cases := []struct {
		name string
		c    hipsys.Copy2D
		want []hipsys.Status
	}{
		// Row 1 lands 64 bytes before row 0: the span (2^64-64) + 64 wraps to 0.
		{"pitch that wraps", d2(target, maxU-63, uintptr(right), 64, 64, 2, hipsys.MemcpyDeviceToDevice), []hipsys.Status{inval}},
		{"src pitch that wraps", d2(target, 64, uintptr(right), maxU-63, 64, 2, hipsys.MemcpyDeviceToDevice), []hipsys.Status{inval}},
		{"oversized rows", d2(target, 1<<63, uintptr(right), 1<<63, 1<<63, 2, hipsys.MemcpyDeviceToDevice), []hipsys.Status{inval}},
		{"height 2^62", d2(target, 4, uintptr(right), 4, 4, 1<<62, hipsys.MemcpyDeviceToDevice), []hipsys.Status{inval}},
		{"height 2^61+1 into 64 bytes", d2(target, 8, uintptr(host), 8, 8, 1<<61+1, hipsys.MemcpyHostToDevice), []hipsys.Status{inval}},
		{"zero pitch", d2(target, 0, uintptr(right), 64, 64, 2, hipsys.MemcpyDeviceToDevice), []hipsys.Status{pitch}},
		{"row past the address space", d2(hipsys.DevicePtr(maxU-100), 4096, uintptr(right), 4096, 4096, 1, hipsys.MemcpyDeviceToDevice), []hipsys.Status{inval}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.expect(t, s.p.Memcpy2D(tc.c), "hipMemcpy2D", tc.want...)
			s.expect(t, s.p.Memcpy2DAsync(tc.c, st), "hipMemcpy2DAsync", tc.want...)
		})
	}
	t.Run("linear ranges past the address space", func(t *testing.T) {
		end := hipsys.DevicePtr(maxU - 15)
		s.expect(t, s.p.MemsetAsync(end, 0, 32, st), "hipMemsetAsync", inval)
		s.expect(t, s.p.Memset(end, 0, 32), "hipMemset", inval)
		s.expect(t, s.p.MemcpyDtoD(end, target, 32), "hipMemcpyDtoD", inval)
		s.expect(t, s.p.MemcpyDtoDAsync(target, end, 32, st), "hipMemcpyDtoDAsync", inval)
		s.expect(t, s.p.MemcpyHtoD(end, make([]byte, 32)), "hipMemcpyHtoD", inval)
		s.expect(t, s.p.MemcpyDtoH(make([]byte, 32), end), "hipMemcpyDtoH", inval)
		s.expect(t, s.p.MemcpyHtoDAsync(target, hipsys.HostPtr(maxU-15), 32, st), "hipMemcpyHtoDAsync", inval)
		s.expect(t, s.p.MemcpyDtoHAsync(hipsys.HostPtr(maxU-15), target, 32, st), "hipMemcpyDtoHAsync", inval)
	})
	s.sync(t, st)
	require.NoError(t, s.p.DeviceSynchronize())
	for i, b := range []hipsys.DevicePtr{left, target, right} {
		assert.True(t, bytes.Equal(pattern(n, byte(i+1)), s.download(t, b, n)), "allocation %d was touched", i)
	}
	assert.True(t, bytes.Equal(pattern(n, 4), host.Bytes(n)), "the pinned buffer was touched")
}
