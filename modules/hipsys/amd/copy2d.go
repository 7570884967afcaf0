package amd

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Memcpy2D is hipMemcpy2D. Both ends are platform memory (device or pinned host, as
// c.Kind says); every row is checked to lie inside its allocation first.
func (p *Platform) Memcpy2D(c hipsys.Copy2D) error {
	const call = "hipMemcpy2D"
	if err := p.check2D(call, c); err != nil || c.Width == 0 || c.Height == 0 {
		return err
	}
	return check(call, C.amdt_memcpy2d(p.lib.s.memcpy2D, C.uintptr_t(c.Dst), C.size_t(c.DstPitch),
		C.uintptr_t(c.Src), C.size_t(c.SrcPitch), C.size_t(c.Width), C.size_t(c.Height), C.int(c.Kind)))
}

// Memcpy2DAsync is hipMemcpy2DAsync on stream.
func (p *Platform) Memcpy2DAsync(c hipsys.Copy2D, stream hipsys.Stream) error {
	const call = "hipMemcpy2DAsync"
	if err := p.stream(call, stream); err != nil {
		return err
	}
	if err := p.check2D(call, c); err != nil || c.Width == 0 || c.Height == 0 {
		return err
	}
	return check(call, C.amdt_memcpy2d_async(p.lib.s.memcpy2DAsync, C.uintptr_t(c.Dst), C.size_t(c.DstPitch),
		C.uintptr_t(c.Src), C.size_t(c.SrcPitch), C.size_t(c.Width), C.size_t(c.Height), C.int(c.Kind),
		C.uintptr_t(stream)))
}

// check2D checks the copy's numbers (hipsys.Copy2D.Check: pitches, kind, spans that
// cannot wrap around 64 bits), then that each side's span, from the first row's start to
// the last row's end, lies inside one allocation of its kind.
func (p *Platform) check2D(call string, c hipsys.Copy2D) error {
	dstSpan, srcSpan, err := c.Check(name, call)
	if err != nil || dstSpan == 0 {
		return err
	}
	dk, sk, err := p.kinds(c)
	if err != nil {
		return invalid(call, hipsys.ErrorInvalidMemcpyDirection, err.Error())
	}
	if err := dk.check(c.Dst, dstSpan); err != nil {
		return invalid(call, hipsys.ErrorInvalidValue, "Dst: "+err.Error())
	}
	if err := sk.check(c.Src, srcSpan); err != nil {
		return invalid(call, hipsys.ErrorInvalidValue, "Src: "+err.Error())
	}
	return nil
}

// kinds are the allocation tables the copy's destination and source must lie in.
// hipMemcpyDefault lets HIP tell from the address; here the tables tell.
func (p *Platform) kinds(c hipsys.Copy2D) (dst, src *allocs, err error) {
	switch c.Kind {
	case hipsys.MemcpyHostToHost:
		return p.host, p.host, nil
	case hipsys.MemcpyHostToDevice:
		return p.device, p.host, nil
	case hipsys.MemcpyDeviceToHost:
		return p.host, p.device, nil
	case hipsys.MemcpyDeviceToDevice:
		return p.device, p.device, nil
	case hipsys.MemcpyDefault:
		which := func(a uintptr) *allocs {
			if p.device.check(a, 1) == nil {
				return p.device
			}
			return p.host
		}
		return which(c.Dst), which(c.Src), nil
	}
	return nil, nil, fmt.Errorf("unknown hipMemcpyKind %d", c.Kind)
}
