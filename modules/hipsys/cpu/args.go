package cpu

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

// checkArgs compares a launch's arguments with the kernel's parameters as its compiled
// signature has them (hipsys.CheckArgs: the number, and each argument's size). Checked
// when the launch is queued, a mismatch is an error of the launch itself; left to the
// worker it would surface at some later synchronization, after the caller had gone on
// as if the kernel had run.
func checkArgs(f *function, args *hipsys.KernelArgs) error {
	return hipsys.CheckArgs(name, f.jf.Name(), f.jf.ParamSizes(), args)
}
