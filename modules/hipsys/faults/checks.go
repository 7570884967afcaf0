package faults

import "github.com/cubehip/cubehip/modules/hipsys"

var _ hipsys.KernelChecking = (*Platform)(nil)

// SetKernelChecks is the wrapped platform's: the kernels it compiles are the ones checked.
// Over a platform that cannot check kernels, hipErrorNotSupported.
func (w *Platform) SetKernelChecks(c hipsys.Checks) error {
	if kc, ok := w.inner.(hipsys.KernelChecking); ok {
		return kc.SetKernelChecks(c)
	}
	return &hipsys.Error{Platform: w.inner.Name(), Call: "hiprtcCompileProgram", Status: hipsys.ErrorNotSupported,
		Detail: "the platform cannot check kernels"}
}
