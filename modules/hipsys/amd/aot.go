package amd

import (
	"errors"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// CompileFor compiles HIP C++ source ahead of time for the named AMD architecture
// ("gfx90a", "gfx1100", or with features, "gfx90a:xnack-"), with hiprtc and no GPU: it
// needs libamdhip64 and hiprtc only, not a device. The code object it gives is what
// ModuleLoadData takes in a later process on a GPU of that architecture.
//
// progName is the program's name in diagnostics. options are passed to hiprtc after
// cubehip's defaults (see RTCCompileProgram); they must not name another architecture.
// log is hiprtc's log, warnings included, also when err is nil. A failed compile is an
// *hipsys.Error with RTCErrorCompilation and the log as its Detail; an architecture the
// installed compiler does not support is RTCErrorInvalidOption, naming the ones it does.
// Safe for concurrent use; each call compiles its own program.
func CompileFor(arch, source, progName string, options []string) (codeObject []byte, log string, err error) {
	const call = "hiprtcCompileProgram"
	if strings.TrimSpace(arch) == "" {
		return nil, "", hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidOption, "no architecture given")
	}
	if a := explicitArch(options); a != "" && a != arch {
		return nil, "", hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidOption,
			"options name --offload-arch="+a+" but the target is "+arch)
	}
	if refused := hipsys.DeviceLaunchLog(source, progName, nil); refused != "" {
		return nil, refused, hipsys.NewRTCError(name, call, hipsys.RTCErrorCompilation, refused)
	}
	lib, err := loadDefault()
	if err != nil {
		return nil, "", err
	}
	h, err := lib.create(source, progName, nil)
	if err != nil {
		return nil, "", err
	}
	defer func() { err = errors.Join(err, lib.destroy(h)) }()
	if err := lib.compile(h, arch, options); err != nil {
		return nil, "", err
	}
	log, err = lib.programLog(h)
	if err != nil {
		return nil, "", err
	}
	code, err := lib.code(h)
	return code, log, err
}
