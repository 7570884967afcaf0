package server

import (
	"errors"
	"fmt"
	"os"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// EnvCheck names the kernel checks every Device of the process runs its kernels under
// ("memcheck,initcheck,synccheck", "all"), as Options.Check does.
const EnvCheck = "CUBEHIP_CHECK"

// kernelChecks is what a Device's checks need: the pool layout its streams get, the
// compile option every kernel it compiles carries, and the release of the platform's
// side, called at Close.
type kernelChecks struct {
	layout  memory.Layout
	options []string
	release func()
}

// checkKernels turns on the checks opts and $CUBEHIP_CHECK ask for on p for this Device
// (the platform is the process's, shared by every Device: its other Devices stay
// unchecked). Under memcheck every buffer is an allocation of its own, of its exact size
// and never handed out again by the pools, so that the platform's redzones lie right
// after each buffer's last byte and a released buffer's memory stays released (the
// checker names an access to it). A platform that cannot check kernels (a GPU's) refuses,
// saying to run on the cpu device: a program that asked for a check must not run
// unchecked believing it was checked.
func checkKernels(p hipsys.Platform, opts *Options) (kernelChecks, error) {
	none := kernelChecks{layout: opts.Layout, release: func() {}}
	checks := opts.Check
	env, err := hipsys.ParseChecks(os.Getenv(EnvCheck))
	if err != nil {
		return none, fmt.Errorf("%w: %s: %v", ErrInvalidArgument, EnvCheck, err)
	}
	checks |= env
	if checks == 0 {
		return none, nil
	}
	refused := fmt.Errorf("%w: kernel checks (%s) run on the cpu device only: the %s platform runs kernels on "+
		"hardware cubehip cannot watch. Run the program on the cpu device (CUBEHIP_PLATFORM=cpu, or Options.Platform "+
		"\"cpu\"), which runs the same kernel source checked", ErrInvalidArgument, checks, p.Name())
	kc, ok := p.(hipsys.KernelChecking)
	if !ok {
		return none, refused
	}
	release, err := kc.CheckKernels(checks)
	if err != nil {
		if errors.Is(err, hipsys.ErrorNotSupported) {
			return none, refused // a wrapper over a GPU platform
		}
		return none, err
	}
	out := kernelChecks{layout: opts.Layout, options: []string{hipsys.CheckOption(checks)}, release: release}
	if checks&(hipsys.CheckMemory|hipsys.CheckInit) != 0 {
		out.layout = memory.Explicit(memory.DirectSpec{ReclaimAt: 1, Exact: true})
	}
	return out, nil
}
