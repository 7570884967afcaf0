package compute

// MaxActiveBlocksPerMultiprocessor compiles k for the device if this server never did (or
// loads it from the kernel caches) and returns how many blocks of it, of blockSize threads
// with sharedMem bytes of dynamic shared memory each, one multiprocessor of the device
// holds at once (hipModuleOccupancyMaxActiveBlocksPerMultiprocessor). Times the device's
// MultiProcessorCount it is the most blocks a cooperative launch of k may have. A compile
// or load failure is returned as Compile returns it and changes no buffer.
func (s *Server) MaxActiveBlocksPerMultiprocessor(k *Kernel, blockSize int, sharedMem uint64) (int, error) {
	fn, err := s.Compile(k)
	if err != nil {
		return 0, err
	}
	return s.p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, blockSize, sharedMem)
}
