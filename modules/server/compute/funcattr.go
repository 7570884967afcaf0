package compute

import "github.com/cubehip/cubehip/modules/hipsys"

// FuncAttribute compiles k for the device if this server never did (or loads it from the
// kernel caches) and returns one of its function's attributes (hipFuncGetAttribute). A
// compile or load failure is returned as Compile returns it.
func (s *Server) FuncAttribute(k *Kernel, attr hipsys.FuncAttribute) (int, error) {
	fn, err := s.Compile(k)
	if err != nil {
		return 0, err
	}
	return s.p.FuncGetAttribute(fn, attr)
}

// SetFuncAttribute compiles k as FuncAttribute does and sets one of its function's
// settable attributes (hipFuncSetAttribute). The function is the device's one for k's
// identity (KernelID): every Kernel of the same source, entry and options shares it.
func (s *Server) SetFuncAttribute(k *Kernel, attr hipsys.FuncAttribute, value int) error {
	fn, err := s.Compile(k)
	if err != nil {
		return err
	}
	return s.p.FuncSetAttribute(fn, attr, value)
}
