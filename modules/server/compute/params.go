package compute

import (
	"errors"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Params compiles k for the device if this server never did (or loads it from the
// kernel caches) and returns its parameters in declaration order as the platform's
// compiler laid them out: nil, with no error, where the platform cannot tell
// (hipErrorNotSupported), so that the caller launches unchecked. A compile or load
// failure is returned as Compile returns it and changes no buffer.
func (s *Server) Params(k *Kernel) ([]hipsys.KernelParam, error) {
	fn, err := s.Compile(k)
	if err != nil {
		return nil, err
	}
	params, err := s.p.FuncGetParams(fn)
	var he *hipsys.Error
	if errors.As(err, &he) && he.Status == hipsys.ErrorNotSupported {
		return nil, nil
	}
	return params, err
}
