package conformance

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The pitched-copy shape: pitches differ from each other and from the width, so a copy
// that ignores either pitch, or copies whole pitches instead of widths, lands bytes in
// the wrong place or overwrites the gaps between rows.
const (
	width2D    = 100
	height2D   = 7
	srcPitch2D = 128
	dstPitch2D = 160
	gapByte    = 0xee
)

// end2D is one side of a pitched copy: device or pinned host memory, and how to fill and
// read it.
type end2D struct {
	addr  uintptr
	write func(data []byte)
	read  func(n int) []byte
}

func (s *suite) end2D(t *testing.T, device bool, size int) end2D {
	if device {
		ptr := s.malloc(t, uint64(size))
		return end2D{
			addr:  uintptr(ptr),
			write: func(data []byte) { require.NoError(t, s.p.MemcpyHtoD(ptr, data)) },
			read:  func(n int) []byte { return s.download(t, ptr, n) },
		}
	}
	h := s.hostMalloc(t, uint64(size))
	return end2D{
		addr:  uintptr(h),
		write: func(data []byte) { copy(h.Bytes(len(data)), data) },
		read: func(n int) []byte {
			require.NoError(t, s.p.DeviceSynchronize())
			return bytes.Clone(h.Bytes(n))
		},
	}
}

func (s *suite) memory2D(t *testing.T) {
	kinds := []struct {
		name           string
		kind           hipsys.MemcpyKind
		srcDev, dstDev bool
	}{
		{"HtoD", hipsys.MemcpyHostToDevice, false, true},
		{"DtoH", hipsys.MemcpyDeviceToHost, true, false},
		{"DtoD", hipsys.MemcpyDeviceToDevice, true, true},
		{"HtoH", hipsys.MemcpyHostToHost, false, false},
	}
	for _, async := range []bool{false, true} {
		for _, k := range kinds {
			name := k.name
			call := "hipMemcpy2D"
			if async {
				name += " async"
				call = "hipMemcpy2DAsync"
			}
			t.Run(name, func(t *testing.T) {
				srcSize, dstSize := srcPitch2D*height2D, dstPitch2D*height2D
				src, dst := s.end2D(t, k.srcDev, srcSize), s.end2D(t, k.dstDev, dstSize)
				data := pattern(srcSize, byte(k.kind))
				src.write(data)
				dst.write(bytes.Repeat([]byte{gapByte}, dstSize))

				c := hipsys.Copy2D{
					Dst: dst.addr, DstPitch: dstPitch2D, Src: src.addr, SrcPitch: srcPitch2D,
					Width: width2D, Height: height2D, Kind: k.kind,
				}
				if async {
					st := s.stream(t, hipsys.StreamNonBlocking)
					require.NoError(t, s.p.Memcpy2DAsync(c, st), call)
					s.sync(t, st)
				} else {
					require.NoError(t, s.p.Memcpy2D(c), call)
				}

				want := bytes.Repeat([]byte{gapByte}, dstSize)
				for r := range height2D {
					copy(want[r*dstPitch2D:r*dstPitch2D+width2D], data[r*srcPitch2D:r*srcPitch2D+width2D])
				}
				assert.True(t, bytes.Equal(want, dst.read(dstSize)), "rows land at the destination pitch, gaps untouched")
			})
		}
	}

	t.Run("errors", func(t *testing.T) {
		a, b := s.malloc(t, 4096), s.malloc(t, 4096)
		good := hipsys.Copy2D{Dst: uintptr(a), DstPitch: 64, Src: uintptr(b), SrcPitch: 64, Width: 32, Height: 4, Kind: hipsys.MemcpyDeviceToDevice}
		st := s.stream(t, hipsys.StreamNonBlocking)
		for _, tc := range []struct {
			name string
			edit func(c *hipsys.Copy2D)
			want []hipsys.Status
		}{
			// A row wider than a pitch: AMD's HIP checks it as a value and says
			// hipErrorInvalidValue; CUDA's cuMemcpy2D says INVALID_PITCH_VALUE (12).
			{"width over dst pitch", func(c *hipsys.Copy2D) { c.Width = 65 }, []hipsys.Status{hipsys.ErrorInvalidValue, hipsys.ErrorInvalidPitchValue}},
			{"width over src pitch", func(c *hipsys.Copy2D) { c.Width = 48; c.SrcPitch = 40 }, []hipsys.Status{hipsys.ErrorInvalidValue, hipsys.ErrorInvalidPitchValue}},
			// A kind outside hipMemcpyKind: AMD says hipErrorInvalidMemcpyDirection,
			// the CUDA mapping (which has no such check) INVALID_VALUE.
			{"bad kind", func(c *hipsys.Copy2D) { c.Kind = 7 }, []hipsys.Status{hipsys.ErrorInvalidMemcpyDirection, hipsys.ErrorInvalidValue}},
			{"null dst", func(c *hipsys.Copy2D) { c.Dst = 0 }, []hipsys.Status{hipsys.ErrorInvalidValue}},
			{"null src", func(c *hipsys.Copy2D) { c.Src = 0 }, []hipsys.Status{hipsys.ErrorInvalidValue}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := good
				tc.edit(&c)
				s.expect(t, s.p.Memcpy2D(c), "hipMemcpy2D", tc.want...)
				s.expect(t, s.p.Memcpy2DAsync(c, st), "hipMemcpy2DAsync", tc.want...)
			})
		}
		s.sync(t, st)
		assert.NoError(t, s.p.Memcpy2D(good), "the unedited copy is valid")
	})
	t.Run("overflow", s.copyOverflow)
}
