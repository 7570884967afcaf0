package faults

import "github.com/cubehip/cubehip/modules/hipsys"

var _ hipsys.KernelChecking = (*Platform)(nil)

// CheckKernels is the wrapped platform's: the kernels it compiles are the ones checked.
// Over a platform that cannot check kernels, hipErrorNotSupported.
func (w *Platform) CheckKernels(c hipsys.Checks) (release func(), err error) {
	if kc, ok := w.inner.(hipsys.KernelChecking); ok {
		return kc.CheckKernels(c)
	}
	return nil, &hipsys.Error{Platform: w.inner.Name(), Call: "hiprtcCompileProgram", Status: hipsys.ErrorNotSupported,
		Detail: "the platform cannot check kernels"}
}
