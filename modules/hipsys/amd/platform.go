package amd

// #include "trampolines.h"
import "C"

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// name is the platform's name in errors and in the registry.
const name = "amd"

func init() { hipsys.Register(name, func() (hipsys.Platform, error) { return Open() }) }

// Platform is hipsys.Platform over ROCm's libamdhip64 and hiprtc. Each method is one HIP
// call (two where a size must be fetched first), after the handles and address ranges it
// is given have been checked against the ones this Platform gave out.
type Platform struct {
	lib *library

	streams, events, modules, functions *handles
	graphs, execs, nodes                *handles
	programs                            *programs
	device, host                        *allocs
	vars                                *moduleVars  // module variables handed out, which device checks also accept
	imports                             *importSpans // ImportMemory's ranges, which device checks accept too
	params                              *paramTables // FuncGetParams' answers, from each module's metadata

	attrsMu sync.Mutex
	attrs   map[uintptr]*funcAttrs // FuncSetAttribute's values, by function

	propsMu sync.Mutex
	props   map[int]hipsys.DeviceProps // per device, for the hiprtc architecture
}

var _ hipsys.Platform = (*Platform)(nil)

// Open loads libamdhip64 (EnvLibrary, else the newest of .so.7, .so.6, .so.5 and the
// unversioned name), resolves every HIP call the platform makes and checks that the
// runtime is ROCm 5.2 or newer. It succeeds on a machine without an AMD GPU, where
// GetDeviceCount then reports hipErrorNoDevice. hiprtc is looked for as well; without it
// the RTC calls fail with hipErrorNotSupported and everything else works.
//
// hipsys.Open("amd") is the usual way in: it opens the platform once per process.
func Open() (*Platform, error) {
	lib, err := loadDefault()
	if err != nil {
		return nil, err
	}
	return newPlatform(lib), nil
}

func newPlatform(lib *library) *Platform {
	p := &Platform{
		lib:     lib,
		streams: newHandles(), events: newHandles(), modules: newHandles(), functions: newHandles(),
		graphs: newHandles(), execs: newHandles(), nodes: newHandles(),
		programs: newPrograms(), params: newParamTables(),
		host:  &allocs{any: "pinned host"},
		vars:  newModuleVars(),
		props: map[int]hipsys.DeviceProps{}, attrs: map[uintptr]*funcAttrs{},
	}
	p.imports = &importSpans{}
	p.vars.spans.also = p.imports
	p.device = &allocs{any: "device", also: p.vars.spans}
	return p
}

// Name is "amd".
func (p *Platform) Name() string { return name }

// Version is the HIP runtime's version as hipRuntimeGetVersion gives it (60200000 for 6.2).
func (p *Platform) Version() int { return p.lib.version }

// Library is the path (or, when the loader does not say, the name) of the libamdhip64 in use.
func (p *Platform) Library() string {
	if p.lib.path != "" {
		return p.lib.path
	}
	return p.lib.hip.Name
}

func hipStatus(r C.int) hipsys.Status { return hipsys.Status(r) }

// check turns a hipError_t into nil or the *hipsys.Error naming call.
func check(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return hipsys.NewError(name, call, hipsys.Status(r), "")
}

func invalid(call string, status hipsys.Status, detail string) error {
	return hipsys.NewError(name, call, status, detail)
}

// badHandle is the error for a handle this platform did not give out or already retired.
func badHandle(call, what string) error {
	return hipsys.NewError(name, call, hipsys.ErrorInvalidHandle, "not a live "+what+" of this platform")
}
