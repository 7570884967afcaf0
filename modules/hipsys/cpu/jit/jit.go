// Package jit is the cpu platform's hiprtc and module loader: it compiles HIP C++ kernel
// source with the system C++ compiler against a prelude that defines HIP's device side,
// caches the result on disk, loads it and runs kernels over the host's cores.
//
// API CONTRACT (fixed; the cpu platform codes against it):
//
//	NewCompiler(cacheDir string) *Compiler          // "" = default cache dir
//	(*Compiler).Compile(source, name string, headers []hipsys.Header, options []string) (image []byte, log string, err error)
//	Load(image []byte) (*Module, error)
//	(*Module).Function(name string) (*Function, error)
//	(*Module).Close() error
//	(*Function).Launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error
//
// Errors are *hipsys.Error with Platform "cpu" and the HIP call the step stands for:
// hiprtcCompileProgram, hipModuleLoadData, hipModuleGetFunction, hipModuleLaunchKernel.
package jit

import "github.com/cubehip/cubehip/modules/hipsys"

// TEMPORARY placeholders until the implementation lands; every call says not supported.

type Compiler struct{ cacheDir string }

func NewCompiler(cacheDir string) *Compiler { return &Compiler{cacheDir: cacheDir} }

func (c *Compiler) Compile(source, name string, headers []hipsys.Header, options []string) ([]byte, string, error) {
	return nil, "", hipsys.NewRTCError("cpu", "hiprtcCompileProgram", hipsys.RTCErrorInternalError, "jit not implemented yet")
}

type Module struct{}
type Function struct{}

func Load(image []byte) (*Module, error) {
	return nil, hipsys.NewError("cpu", "hipModuleLoadData", hipsys.ErrorNotSupported, "jit not implemented yet")
}

func (m *Module) Function(name string) (*Function, error) {
	return nil, hipsys.NewError("cpu", "hipModuleGetFunction", hipsys.ErrorNotSupported, "jit not implemented yet")
}

func (m *Module) Close() error { return nil }

func (f *Function) Launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error {
	return hipsys.NewError("cpu", "hipModuleLaunchKernel", hipsys.ErrorNotSupported, "jit not implemented yet")
}
