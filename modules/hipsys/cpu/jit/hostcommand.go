package jit

// HostCommand is the command line the jit builds kernels with, at optimization level opt
// ("-O2"), without its inputs and output: the compiler ($CXX, else c++, with any
// arguments $CXX carries), the kernels' code generation flags and $CUBEHIP_CPU_CXXFLAGS,
// all of it as a kernel's build gets it. Package hostloop builds the benchmarks' plain
// C++ loops with it, so that a kernel and the loop it is held to get the same code
// generation; a program that does not call it (libcubehip.so) does not link it.
func HostCommand(opt string) ([]string, error) {
	tc, err := findToolchain(workDir(DefaultCacheDir()))
	if err != nil {
		return nil, err
	}
	return append(append(append([]string{}, tc.argv...), baseFlags(opt)...), extraFlags()...), nil
}
