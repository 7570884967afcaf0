package faults

import "github.com/cubehip/cubehip/modules/hipsys"

var _ hipsys.CodeIdentifier = (*Platform)(nil)

// CodeIdentity is the wrapped platform's: the wrapper compiles nothing of its own, and a
// cache over it must key on what the wrapped compiler builds. Over a platform that cannot
// name it, hipErrorNotSupported (a cache then keeps nothing).
func (w *Platform) CodeIdentity(options []string) (string, error) {
	if ci, ok := w.inner.(hipsys.CodeIdentifier); ok {
		return ci.CodeIdentity(options)
	}
	return "", &hipsys.Error{Platform: w.inner.Name(), Call: "hiprtcCompileProgram", Status: hipsys.ErrorNotSupported,
		Detail: "the platform cannot name its compiler's code identity"}
}
