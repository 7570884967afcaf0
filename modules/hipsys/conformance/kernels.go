// Package conformance is the hipsys conformance suite: written once against the
// hipsys.Platform API, run by every platform's tests (cpu, nvidia, amd, and the faults
// wrapper) with the same kernel sources.
//
// API CONTRACT (fixed; platform tests code against it):
//
//	type Kernel struct { Name, Source string; Entries []string }
//	func Kernels() []Kernel                       // every kernel source of the suite
//	func Run(t *testing.T, p hipsys.Platform)     // the whole suite as subtests
//
// A platform's test calls Run with its opened platform; Run asserts only what HIP
// promises on every platform, with small status sets where HIP on AMD and HIP's mapping
// onto CUDA give different numbers for the same failure (each set says why where it is
// used), plus a "cpu-strict" group that runs only when p.Name() is "cpu": the checks the
// cpu platform can make and GPU drivers do not promise (copies past an allocation,
// freed pointers, invented handles).
//
// The package is a test library: it imports only hipsys, testify and the standard
// library, never a platform, so any platform's tests can import it without a cycle.
// The kernels are embedded files (kernels/*.hip), plain HIP C++ that hipcc accepts
// unmodified. Run's subtests run one after another on device 0; Run is not meant to be
// called concurrently on one platform, since its timing and NotReady checks need the
// device to themselves.
package conformance

import (
	"embed"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// Kernel is one HIP C++ source of the suite and the extern "C" entry points it defines.
type Kernel struct {
	Name    string
	Source  string
	Entries []string
}

//go:embed kernels/*.hip kernels/corpus/*.hip
var kernelFiles embed.FS

// entryRE finds the extern "C" entry points of a source: those are the names a module
// exports unmangled, so they are the only ones ModuleGetFunction can find.
var entryRE = regexp.MustCompile(`extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+(\w+)\s*\(`)

// Kernels returns every kernel source of the suite, sorted by name (the file name
// without ".hip"), each with its entry points in source order. Every source includes
// <hip/hip_runtime.h> and is plain HIP C++ that hipcc accepts unmodified. The result is
// a fresh slice the caller may keep.
func Kernels() []Kernel {
	files, err := fs.Glob(kernelFiles, "kernels/*.hip")
	if err != nil {
		// The pattern is a constant; a failure here is a broken build, not bad input.
		panic("conformance: " + err.Error())
	}
	out := make([]Kernel, 0, len(files))
	for _, f := range files {
		src, err := kernelFiles.ReadFile(f)
		if err != nil {
			panic("conformance: embedded " + f + ": " + err.Error())
		}
		k := Kernel{Name: strings.TrimSuffix(path.Base(f), ".hip"), Source: string(src)}
		for _, m := range entryRE.FindAllStringSubmatch(k.Source, -1) {
			k.Entries = append(k.Entries, m[1])
		}
		out = append(out, k)
	}
	return out
}

// kernel is the named source of the suite; the names are constants of this package, so
// a missing one is a broken build.
func kernel(name string) Kernel {
	for _, k := range Kernels() {
		if k.Name == name {
			return k
		}
	}
	panic("conformance: no kernel source " + name)
}
