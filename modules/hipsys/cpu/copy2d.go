package cpu

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

// copy2D validates a pitched copy and turns it into a command. Both sides are platform
// memory: device memory, or pinned host memory from HostMalloc where Kind puts host
// memory (MemcpyDefault infers each side from the address). The numbers are checked
// first (hipsys.Copy2D.Check: pitches, overflow), then each side's whole span, every row
// but the last a full pitch, must lie in one live allocation.
func (p *Platform) copy2D(call string, c hipsys.Copy2D) (command, error) {
	t := command{kind: cmdCopy2D, dst: c.Dst, src: c.Src, dpitch: c.DstPitch, spitch: c.SrcPitch, size: c.Width, height: c.Height}
	dstSpan, srcSpan, err := c.Check(name, call)
	if err != nil || dstSpan == 0 {
		return t, err
	}
	switch c.Kind {
	case hipsys.MemcpyHostToHost:
		t.dstHost, t.srcHost = true, true
	case hipsys.MemcpyHostToDevice:
		t.srcHost = true
	case hipsys.MemcpyDeviceToHost:
		t.dstHost = true
	case hipsys.MemcpyDefault:
		t.dstHost = !p.device.contains(c.Dst, 1) && p.host.contains(c.Dst, 1)
		t.srcHost = !p.device.contains(c.Src, 1) && p.host.contains(c.Src, 1)
	}
	if err := p.checkSide(call, "Dst", t.dstHost, c.Dst, dstSpan); err != nil {
		return t, err
	}
	if err := p.checkSide(call, "Src", t.srcHost, c.Src, srcSpan); err != nil {
		return t, err
	}
	return t, nil
}

// Memcpy2D copies Height rows of Width bytes and returns when done, after prior work on
// the null stream (as Memset).
func (p *Platform) Memcpy2D(c hipsys.Copy2D) error {
	const call = "hipMemcpy2D"
	t, err := p.copy2D(call, c)
	if err != nil || c.Width == 0 || c.Height == 0 {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	err = t.exec()
	if err == nil {
		p.wroteBy(&t)
	}
	return err
}

// Memcpy2DAsync queues the pitched copy on the stream and returns at once.
func (p *Platform) Memcpy2DAsync(c hipsys.Copy2D, sh hipsys.Stream) error {
	const call = "hipMemcpy2DAsync"
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	t, err := p.copy2D(call, c)
	if err != nil || c.Width == 0 || c.Height == 0 {
		return err
	}
	return s.enqueue(call, &t)
}
