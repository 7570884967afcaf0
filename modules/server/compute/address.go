package compute

import "github.com/cubehip/cubehip/modules/hipsys"

// Address is where b's view lies on the device, and its size, whatever b carries: a
// failed buffer's bytes are still where they were. It orders nothing and checks no
// failure, so it is for locating memory (which live buffer holds a raw pointer), never for
// handing it out (ResourcePointer does that).
func (s *Server) Address(b Binding) (hipsys.DevicePtr, uint64, error) {
	return s.streams.Resource(b)
}
