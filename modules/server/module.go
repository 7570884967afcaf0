package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Module is a HIP C++ source compiled with its options as one unit, as HIP's
// hipModuleLoadData and CuPy's RawModule take it: compiled once per device, loaded once,
// its kernels taken from it by name, and its __device__ and __constant__ variables
// shared by all of them (kernel A writes a device variable, kernel B of the same source
// reads it), on every platform.
//
// Every kernel of one source and options belongs to one module whichever way it was
// made: DefineKernel(src, "a") and DefineKernel(src, "b") share their module as
// m.Kernel("a") and m.Kernel("b") do. A Module is immutable and safe to share.
//
//	m := server.NewModule(source)
//	scale, sum := m.Kernel("scale"), m.Kernel("sum", server.Block(server.Dim3{X: 128}))
//	server.WriteGlobalSlice(dev.Stream, m, "coeffs", []float32{1, 2, 3})
type Module struct {
	k       *compute.Kernel // the module as compute names it: no entry point
	options []string
	names   []string
}

// NewModule returns the module of source compiled with options (passed to the
// platform's compiler as given, as CompilerOptions passes them). Nothing is compiled
// until a device needs it (LoadModule, a launch of one of its kernels, a variable).
func NewModule(source string, options ...string) *Module {
	return NewModuleWithNames(source, nil, options...)
}

// NewModuleWithNames is NewModule whose compile also resolves the C++ name expressions
// names, as CuPy's RawModule(name_expressions=...) and hiprtcAddNameExpression do: each
// is then a kernel Kernel takes by that expression, a template's specialization
// ("reduce<float, 256>", which the compile instantiates), a C++-linkage kernel ("scale"),
// or one overload told apart by a cast ("(void(*)(float*))scale").
func NewModuleWithNames(source string, names []string, options ...string) *Module {
	options = append([]string(nil), options...)
	names = append([]string{}, names...)
	return &Module{k: compute.NewNamedKernel(source, "", names, hipsys.Dim3{}, nil, options...), options: options, names: names}
}

// Kernel is the module's kernel entry, with the kernel options DefineKernel takes
// (Block, IO, SharedMem; CompilerOptions adds to the module's options and so names
// another module): an extern "C" kernel by its name, any other by one of the module's
// name expressions.
func (m *Module) Kernel(entry string, opts ...KernelOption) *Kernel {
	if m == nil || m.k == nil {
		return &Kernel{} // invalid: every call with it says so
	}
	names := func(s *kernelSpec) { s.names = m.names }
	return DefineKernel(m.k.Source, entry, append([]KernelOption{CompilerOptions(m.options...), names}, opts...)...)
}

// NameExpressions is a copy of the C++ name expressions the module resolves.
func (m *Module) NameExpressions() []string { return append([]string(nil), m.names...) }

// Source is the module's HIP C++ source.
func (m *Module) Source() string { return m.k.Source }

// CompilerOptions is a copy of the options the module is compiled with.
func (m *Module) CompilerOptions() []string { return append([]string(nil), m.options...) }

// ID is the module's identity in the kernel caches: a hash of its source and options.
func (m *Module) ID() compute.ModuleID { return m.k.Module() }

// String is the module as a person reads it: "Module(1a2b3c4d5e6f7a8b)".
func (m *Module) String() string {
	if m == nil || m.k == nil {
		return "Module(nil)"
	}
	return "Module(" + m.k.Module().String() + ")"
}

func (m *Module) module() *compute.Kernel {
	if m == nil {
		return nil
	}
	return m.k
}

// LoadModule compiles c's module for the device now, or loads it from the kernel
// caches: a mistake in its source is reported here, as a *CompileError with the
// compiler's log, and every kernel of it then launches without compiling. A launch
// compiles on first use anyway.
func (d *Device) LoadModule(c Code) error {
	k, err := codeOf(c, "load module", "")
	if err != nil {
		return fmt.Errorf("load module: %w: nil module or kernel", ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.LoadModule(k)
}
