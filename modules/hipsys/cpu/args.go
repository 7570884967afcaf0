package cpu

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// checkArgs compares a launch's arguments with the kernel's parameters as its compiled
// signature has them: the number, and each argument's size. Checked when the launch is
// queued, a mismatch is an error of the launch itself; left to the worker it would
// surface at some later synchronization, after the caller had gone on as if the kernel
// had run. Sizes catch the scalar of the wrong width (an I64 where the kernel takes an
// int) that would otherwise shift every argument after it. Without a mismatch it costs
// a loop over the sizes and allocates nothing.
func checkArgs(f *function, args *hipsys.KernelArgs) error {
	want := f.jf.ParamSizes()
	var got []uint32
	if args != nil {
		got = args.Sizes()
	}
	if len(got) != len(want) {
		return errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidValue,
			fmt.Sprintf("kernel %s takes %d arguments, got %d", f.jf.Name(), len(want), len(got)))
	}
	for i, n := range want {
		if got[i] != n {
			return errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidValue,
				fmt.Sprintf("argument %d of kernel %s is %d bytes; the parameter takes %d", i, f.jf.Name(), got[i], n))
		}
	}
	return nil
}
