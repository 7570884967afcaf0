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
//
// Before a handle or address reaches ROCm it is checked against those this Platform
// gave out: ROCm dereferences whatever it is given, so an invented stream or a copy past
// the end of an allocation would crash the process. They are hipErrorInvalidHandle and
// hipErrorInvalidValue instead. A pitched copy's numbers are checked first with
// arithmetic that cannot wrap (hipsys.Copy2D.Check), so a pitch or height that overflows
// 64 bits cannot make a huge copy look small.
//
// hiprtc comes from libhiprtc.so.N (ROCm 6.0 on) or libamdhip64 itself (before). Compile
// options depend on the release: before 6.1 hiprtc needs -I with the HIP headers of its
// own ROCm, which the package finds from the library's location, $HIP_PATH, $ROCM_PATH,
// /opt/rocm or /usr/include; from 6.1 hiprtc has them built in. --offload-arch is the
// current device's gcnArchName unless the options name one, and it is checked against
// comgr's list of supported architectures first, because ROCm 5.x's hiprtc aborts the
// process on one it does not know.
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
