package nvidia

// #include "trampolines.h"
import "C"

import (
	"os"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// EnvStreamFlags set to 0 gives streams no completion flags (hipsys.FlagWaiter): no launch
// is flagged, and every wait is cuStreamSynchronize (a driver whose stream memory
// operations misbehave, or a comparison).
const EnvStreamFlags = "CUBEHIP_NVIDIA_STREAM_FLAGS"

// flagSpin is how long a flagged wait spins on its flag before it becomes
// cuStreamSynchronize (trampolines.c, cu_stream_wait_flag). Work that takes longer
// than this is waited for by the driver's own policy, and only a wait whose work
// faulted, whose flag is never written, spins it all: 100 µs is a few dozen empty
// kernels' launch and sync, and nothing beside a fault's report.
const flagSpin = 100_000

// streamFlag is a created stream's completion flag and the device it was made on.
type streamFlag struct {
	flag C.uintptr_t
	dev  int
}

// flagsOff reads EnvStreamFlags, at Open.
func flagsOff() bool { return os.Getenv(EnvStreamFlags) == "0" || C.cu_flags_supported() == 0 }

// giveFlag gives stream s, just created on the calling thread's current device, a
// completion flag: a destroyed stream's, or a new one. A stream without one (no flag
// could be made) waits with cuStreamSynchronize alone.
func (p *Platform) giveFlag(s uintptr) {
	if p.noFlags {
		return
	}
	dev := int(C.cu_get_dev())
	p.flagMu.Lock()
	pool := p.flagPool[dev]
	var f C.uintptr_t
	if n := len(pool); n > 0 {
		f, p.flagPool[dev] = pool[n-1], pool[:n-1]
	}
	p.flagMu.Unlock()
	if f == 0 && C.cu_flag_new(&f) != 0 {
		return
	}
	p.flags.put(s, streamFlag{flag: f, dev: dev})
}

// takeFlag takes destroyed stream s's flag back for the device's next stream. Its
// memory stays: writes the stream queued may land in it after the destroy. Those store
// values older than any the next owner's waits queue (a flag counts on from its last
// value), so no such wait takes one for its own: the worst a late one does is make a
// wait miss its value and spin out to cuStreamSynchronize.
func (p *Platform) takeFlag(s uintptr) {
	f, ok := p.flags.take(s)
	if !ok {
		return
	}
	p.flagMu.Lock()
	defer p.flagMu.Unlock()
	if p.flagPool == nil {
		p.flagPool = map[int][]C.uintptr_t{}
	}
	p.flagPool[f.dev] = append(p.flagPool[f.dev], f.flag)
}

var _ hipsys.FlagWaiter = (*Platform)(nil)

// StreamWaitFlag waits for s's completion flag to reach token (trampolines.c,
// cu_stream_wait_flag), spinning for flagSpin before it becomes cuStreamSynchronize.
func (p *Platform) StreamWaitFlag(s hipsys.Stream, token uint32) error {
	const call = "hipStreamSynchronize"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if f, ok := p.flags.get(uintptr(s)); ok && token != 0 {
		return cuError(call, int32(C.cu_stream_wait_flag(C.uintptr_t(s), f.flag, C.uint32_t(token), flagSpin)))
	}
	return cuError(call, int32(C.cu_stream_sync(C.uintptr_t(s))))
}

// flagOf is s's completion flag for a launch's write, 0 when it has none.
func (p *Platform) flagOf(s hipsys.Stream) C.uintptr_t {
	if p.noFlags {
		return 0
	}
	f, _ := p.flags.get(uintptr(s))
	return f.flag
}
