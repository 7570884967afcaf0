package hipsys

import (
	"math"
	"math/bits"
	"strconv"
)

// The checks every platform runs on a copy's or memset's numbers before it touches
// memory or calls a driver. They need no driver state: they catch the arithmetic that
// would otherwise wrap around 64 bits and make a huge copy look small (a pitched copy
// whose last row's end wraps past 2^64 passes a range check against a 64-byte
// allocation and then writes through the neighbouring ones) and the shapes HIP rejects
// outright. A platform then checks the spans they return against its allocations (the
// cpu and amd platforms) or lets the driver do it (nvidia).

// Extent is how many bytes a pitched region spans from its first byte to its last:
// height rows of width bytes, each row pitch bytes after the one before, so every row
// but the last is a full pitch and the last only its width (a pitched copy may end
// exactly at its allocation's end). ok is false when the span does not fit in 64 bits.
// A region with no rows or empty rows spans 0 bytes.
func Extent(pitch, width, height uint64) (span uint64, ok bool) {
	if width == 0 || height == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(height-1, pitch)
	if hi != 0 {
		return 0, false
	}
	span, carry := bits.Add64(lo, width, 0)
	return span, carry == 0
}

// CheckRange checks the range [addr, addr+size) that a copy or memset call touches on
// one side, named field ("dst", "src") in the error: it must not wrap past the end of
// the address space. A size of 0 touches nothing and is always fine. Whether the range
// is allocated is the platform's (or the driver's) to check. The error is
// hipErrorInvalidValue for platform's call.
func CheckRange(platform, call, field string, addr uintptr, size uint64) error {
	if size == 0 {
		return nil
	}
	if uint64(addr) > math.MaxUint64-(size-1) {
		return NewError(platform, call, ErrorInvalidValue, field+" "+hex(uint64(addr))+" + "+
			strconv.FormatUint(size, 10)+" bytes runs past the end of the address space")
	}
	return nil
}

// CheckCopy checks both sides of a linear copy of size bytes between platform memory
// (CheckRange of dst, then of src). A copy to or from a Go slice checks the platform's
// side alone with CheckRange: the slice is valid by construction.
func CheckCopy(platform, call string, dst, src uintptr, size uint64) error {
	if err := CheckRange(platform, call, "dst", dst, size); err != nil {
		return err
	}
	return CheckRange(platform, call, "src", src, size)
}

// Check validates a pitched copy's numbers for platform's call and returns the bytes
// each side spans (Extent of its pitch), which the platform then checks against the
// allocations at Dst and Src. A copy with Width or Height 0 moves nothing and returns
// spans of 0 and no error, as hipMemcpy2D does.
//
// Errors, each naming the field that is wrong: hipErrorInvalidMemcpyDirection for a Kind
// outside hipMemcpyKind; hipErrorInvalidPitchValue for a pitch smaller than Width (a
// zero pitch included: rows would overlap); hipErrorInvalidValue for a null Dst or Src,
// for a span that overflows 64 bits (Height rows of a pitch), and for a span that runs
// past the end of the address space from its start address.
func (c Copy2D) Check(platform, call string) (dstSpan, srcSpan uint64, err error) {
	if c.Kind < MemcpyHostToHost || c.Kind > MemcpyDefault {
		return 0, 0, NewError(platform, call, ErrorInvalidMemcpyDirection, "Kind "+strconv.Itoa(int(c.Kind))+" is not a hipMemcpyKind")
	}
	if c.Width == 0 || c.Height == 0 {
		return 0, 0, nil
	}
	if c.Dst == 0 {
		return 0, 0, NewError(platform, call, ErrorInvalidValue, "Dst is null")
	}
	if c.Src == 0 {
		return 0, 0, NewError(platform, call, ErrorInvalidValue, "Src is null")
	}
	if c.DstPitch < c.Width {
		return 0, 0, NewError(platform, call, ErrorInvalidPitchValue, "DstPitch "+u(c.DstPitch)+" is smaller than Width "+u(c.Width))
	}
	if c.SrcPitch < c.Width {
		return 0, 0, NewError(platform, call, ErrorInvalidPitchValue, "SrcPitch "+u(c.SrcPitch)+" is smaller than Width "+u(c.Width))
	}
	var ok bool
	if dstSpan, ok = Extent(c.DstPitch, c.Width, c.Height); !ok {
		return 0, 0, NewError(platform, call, ErrorInvalidValue, "Height "+u(c.Height)+" rows of DstPitch "+u(c.DstPitch)+" bytes overflow 64 bits")
	}
	if srcSpan, ok = Extent(c.SrcPitch, c.Width, c.Height); !ok {
		return 0, 0, NewError(platform, call, ErrorInvalidValue, "Height "+u(c.Height)+" rows of SrcPitch "+u(c.SrcPitch)+" bytes overflow 64 bits")
	}
	if err := CheckRange(platform, call, "Dst", c.Dst, dstSpan); err != nil {
		return 0, 0, err
	}
	if err := CheckRange(platform, call, "Src", c.Src, srcSpan); err != nil {
		return 0, 0, err
	}
	return dstSpan, srcSpan, nil
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
