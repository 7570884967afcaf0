package cpu

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// The cpu platform's side of the kernel checker (the jit's check.go has the kernel's).
// With memcheck on, every hipMalloc'ed block has a redzone on each side, memory no buffer
// owns, so an access that runs off a buffer lands in memory the checker can name as that
// buffer's; and a freed block is kept, unused, in a quarantine for a while, so an access
// through a stale pointer lands in memory still known as released instead of in a newer
// buffer's. A checked launch judges its kernel's accesses against all of them
// (checkRegions).
//
// Invariants:
//   - A block's redzones belong to the block: hostRelease frees them with it, and no other
//     block is placed in them; the device is charged for the buffer's size alone.
//   - A quarantined block is in no alloc table: every API call refuses it as freed memory,
//     as before; only checked launches see it, as released.
//   - Regions never overlap: imports inside a device block are left out (the block's
//     region covers them).

// envChecks names the checks every device of the process runs its kernels under.
const envChecks = "CUBEHIP_CHECK"

// quarantineBytes and quarantineBlocks bound the freed memory kept for the checker: past
// either, the oldest block is really freed (a stale pointer to it then goes unreported).
const (
	quarantineBytes  = 256 << 20
	quarantineBlocks = 4096
)

// redzone is the bytes kept free on each side of a checked block of size bytes: an eighth
// of it, between 256 bytes and 64 KiB, a multiple of the alignment so the buffer stays
// aligned. An access further off than that from every buffer is not reported.
func redzone(size uint64) uint64 {
	rz := min(max(size/8, alignment), 64<<10)
	return (rz + alignment - 1) &^ (alignment - 1)
}

// checkState is what the checker keeps on the platform, which every Device of the
// process shares: the checks $CUBEHIP_CHECK asks of every kernel, and how many callers
// hold each check on (CheckKernels); the memory side serves the union.
type checkState struct {
	// now is served(), kept current under mu and read without it: the copies' and the
	// allocations' paths ask it, and must not take a lock when nothing is checked.
	now        atomic.Uint32
	mu         sync.Mutex
	env        hipsys.Checks // $CUBEHIP_CHECK, for every compile
	holders    [8]int        // per check bit, the callers holding it on
	quarantine []block       // oldest first
	held       uint64        // bytes in quarantine, redzones included
}

// checksFromEnv reads $CUBEHIP_CHECK.
func checksFromEnv() (hipsys.Checks, error) {
	return hipsys.ParseChecks(os.Getenv(envChecks))
}

var _ hipsys.KernelChecking = (*Platform)(nil)

// CheckKernels holds checks c on until release (hipsys.KernelChecking): memory allocated
// meanwhile gets redzones (memcheck) and a record of what was written (initcheck), and
// released memory is kept in quarantine. The kernels to check are compiled with
// hipsys.CheckOption(c) among their options; blocks allocated before have none of it,
// and an access past them is not reported. release may be called once; later calls do
// nothing.
func (p *Platform) CheckKernels(c hipsys.Checks) (release func(), err error) {
	p.check.mu.Lock()
	for b := range p.check.holders {
		if c&(1<<b) != 0 {
			p.check.holders[b]++
		}
	}
	p.check.now.Store(uint32(p.check.served()))
	p.check.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.check.mu.Lock()
			for b := range p.check.holders {
				if c&(1<<b) != 0 {
					p.check.holders[b]--
				}
			}
			p.check.now.Store(uint32(p.check.served()))
			p.check.mu.Unlock()
		})
	}, nil
}

// kernelChecks is what the memory side serves now: $CUBEHIP_CHECK and every check a
// caller holds on.
func (p *Platform) kernelChecks() hipsys.Checks { return hipsys.Checks(p.check.now.Load()) }

// served is kernelChecks with c.mu held.
func (c *checkState) served() hipsys.Checks {
	s := c.env
	for b, n := range c.holders {
		if n > 0 {
			s |= 1 << b
		}
	}
	return s
}

// checkedOptions are options with $CUBEHIP_CHECK's check option appended: that variable
// asks for every kernel of the process checked (a caller's own checks come in its
// options).
func (p *Platform) checkedOptions(options []string) []string {
	if o := hipsys.CheckOption(p.check.env); o != "" {
		return append(append([]string(nil), options...), o)
	}
	return options
}

// quarantined keeps b, just removed from its table, for the checker, and frees the
// oldest blocks past the bounds; false when memcheck is off (the caller frees b).
func (p *Platform) quarantined(b block) bool {
	if p.kernelChecks()&hipsys.CheckMemory == 0 {
		return false // unchecked: no lock on the free's path
	}
	c := &p.check
	c.mu.Lock()
	if c.served()&hipsys.CheckMemory == 0 {
		c.mu.Unlock()
		return false
	}
	c.quarantine = append(c.quarantine, b)
	jit.PoisonFreed(uint64(b.base), b.size)
	c.held += b.reserved + 2*b.rz
	var out []block
	for len(c.quarantine) > 1 && (c.held > quarantineBytes || len(c.quarantine) > quarantineBlocks) {
		old := c.quarantine[0]
		c.quarantine = c.quarantine[1:]
		c.held -= old.reserved + 2*old.rz
		out = append(out, old)
	}
	c.mu.Unlock()
	for _, old := range out {
		_ = hostRelease(old)
	}
	return true
}

// wrote marks [dst, dst+n) written for initcheck where it lies in a block that has a
// shadow: a copy or a fill the host queued initializes it as a kernel's store does.
func (p *Platform) wrote(dst uintptr, n uint64) {
	if n == 0 || p.kernelChecks()&hipsys.CheckInit == 0 {
		return
	}
	p.device.mu.RLock()
	defer p.device.mu.RUnlock()
	for n > 0 {
		i := p.device.find(dst)
		if i < 0 {
			return
		}
		b := &p.device.blocks[i]
		off := uint64(dst - b.base)
		k := min(n, b.size-off)
		if b.init != 0 {
			markShadow(b.init+uintptr(off), k)
			jit.MarkWritten(uint64(b.base), b.size, b.init, off, k)
		}
		dst, n = dst+uintptr(k), n-k
	}
}

// wroteBy marks what a finished copy or fill command wrote (wrote).
func (p *Platform) wroteBy(c *command) {
	switch c.kind {
	case cmdMemset, cmdCopy:
		if !c.dstHost {
			p.wrote(c.dst, c.size)
		}
	case cmdCopy2D:
		if !c.dstHost {
			for row := uint64(0); row < c.height; row++ {
				p.wrote(c.dst+uintptr(row*c.dpitch), c.size)
			}
		}
	}
}

// checkRegions is the device memory a checked launch judges accesses against: every live
// device block (with its redzones), every quarantined one (released), and imported ranges
// outside them.
func (p *Platform) checkRegions() []jit.CheckRegion {
	var out []jit.CheckRegion
	p.device.mu.RLock()
	for _, b := range p.device.blocks {
		lo, hi := b.span()
		out = append(out, jit.CheckRegion{Lo: lo, Base: uint64(b.base), Size: b.size, Hi: hi, Init: b.init})
	}
	p.device.mu.RUnlock()
	p.check.mu.Lock()
	for _, b := range p.check.quarantine {
		lo, hi := b.span()
		out = append(out, jit.CheckRegion{Lo: lo, Base: uint64(b.base), Size: b.size, Hi: hi, Freed: true})
	}
	p.check.mu.Unlock()
	blocks := len(out)
	p.imports.mu.RLock()
	for _, r := range p.imports.ranges {
		lo, hi := uint64(r.base), uint64(r.base)+r.size
		inside := false
		for _, b := range out[:blocks] {
			if lo < b.Hi && hi > b.Lo {
				inside = true
				break
			}
		}
		dup := len(out) > blocks && out[len(out)-1].Lo <= lo && hi <= out[len(out)-1].Hi
		if !inside && !dup {
			if len(out) > blocks && lo < out[len(out)-1].Hi {
				// Overlapping imports of one host range: one region covering both.
				last := &out[len(out)-1]
				last.Hi, last.Size = max(last.Hi, hi), max(last.Hi, hi)-last.Base
				continue
			}
			out = append(out, jit.CheckRegion{Lo: lo, Base: lo, Size: r.size, Hi: hi})
		}
	}
	p.imports.mu.RUnlock()
	return out
}
