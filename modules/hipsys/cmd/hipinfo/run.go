package main

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// compile builds source with hiprtc and loads the entry point; a compile failure comes
// back with hiprtc's log, which is what a user needs to fix the kernel.
func compile(p hipsys.Platform, source, entry string) (hipsys.Function, error) {
	prog, err := p.RTCCreateProgram(source, entry+".hip", nil)
	if err != nil {
		return 0, err
	}
	defer p.RTCDestroyProgram(prog)
	if err := p.RTCCompileProgram(prog, []string{"-O3"}); err != nil {
		log, _ := p.RTCGetProgramLog(prog)
		return 0, fmt.Errorf("%w\n%s", err, log)
	}
	code, err := p.RTCGetCode(prog)
	if err != nil {
		return 0, err
	}
	mod, err := p.ModuleLoadData(code)
	if err != nil {
		return 0, err
	}
	return p.ModuleGetFunction(mod, entry)
}

func eventPair(p hipsys.Platform) (hipsys.Event, hipsys.Event, error) {
	start, err := p.EventCreateWithFlags(hipsys.EventDefault)
	if err != nil {
		return 0, 0, err
	}
	stop, err := p.EventCreateWithFlags(hipsys.EventDefault)
	return start, stop, err
}

// timed brackets work with two events and waits for the second, so the elapsed time is
// the device's own measure of the work, not the host's enqueue time.
func timed(p hipsys.Platform, s hipsys.Stream, start, stop hipsys.Event, work func() error) error {
	if err := p.EventRecord(start, s); err != nil {
		return err
	}
	if err := work(); err != nil {
		return err
	}
	if err := p.EventRecord(stop, s); err != nil {
		return err
	}
	return p.EventSynchronize(stop)
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func gbps(bytes uint64, ms float32) float64 {
	if ms <= 0 {
		return 0
	}
	return float64(bytes) / (float64(ms) / 1e3) / 1e9
}
