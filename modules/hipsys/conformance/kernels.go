// Package conformance is the hipsys conformance suite: written once against the
// hipsys.Platform API, run by every platform's tests (cpu, nvidia, amd, and the faults
// wrapper) with the same kernel sources.
//
// API CONTRACT (fixed; platform tests code against it):
//
//	type Kernel struct { Name, Source string; Entries []string }
//	func Kernels() []Kernel                       // every kernel source of the suite
//	func Run(t *testing.T, p hipsys.Platform)     // the whole suite as subtests
package conformance

// Kernel is one HIP C++ source of the suite and the extern "C" entry points it defines.
type Kernel struct {
	Name    string
	Source  string
	Entries []string
}
