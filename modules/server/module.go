package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	if m.k.Code != nil {
		return m.codeKernel(entry, opts)
	}
	names := func(s *kernelSpec) { s.names = m.names }
	return DefineKernel(m.k.Source, entry, append([]KernelOption{CompilerOptions(m.options...), names}, opts...)...)
}

// NameExpressions is a copy of the C++ name expressions the module resolves.
func (m *Module) NameExpressions() []string { return append([]string(nil), m.names...) }

// Source is the module's HIP C++ source; "" for a module given as code.
func (m *Module) Source() string { return m.k.Source }

// IsCode reports whether the module is given as compiled code (NewModuleFromCode,
// ReadModuleFile of a code file): its kernels then need IO to take buffers.
func (m *Module) IsCode() bool { return m != nil && m.k != nil && m.k.Code != nil }

// Code is a copy of the module's compiled code (NewModuleFromCode, ReadModuleFile); nil
// for a module given as source.
func (m *Module) Code() []byte {
	if m == nil || m.k == nil {
		return nil
	}
	return append([]byte(nil), m.k.Code...)
}

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

// NewModuleFromCode returns the module of code compiled ahead of time, as the platform's
// hipModuleLoadData takes it (a code object on amd; a cubin, PTX or fatbin on nvidia; the
// cpu device's object; the file `cubehip compile -o` writes for a device), loaded as it
// is: nothing is compiled, and code for another device or platform fails to load with an
// error naming the module. The code is copied. Its kernels are taken by their symbols
// (an extern "C" kernel's name); it has no source to infer their buffers' access from,
// so Kernel needs IO for a kernel that takes buffers (a launch without says so).
func NewModuleFromCode(code []byte) *Module {
	return &Module{k: compute.ModuleOfCode(code)}
}

// sourceExt are the file extensions ReadModuleFile reads as source.
var sourceExt = map[string]bool{".hip": true, ".cu": true, ".cpp": true, ".cc": true, ".cxx": true, ".cuh": true, ".h": true, ".hpp": true}

// ReadModuleFile returns the module of the file at path, as CuPy's RawModule(path=...)
// takes one: a source file (.hip, .cu, .cpp, .cc, .cxx, .cuh, .h, .hpp) is NewModule of
// its text with options; anything else is code (NewModuleFromCode): a file `cubehip
// compile` or the kernel disk cache wrote (its sealed entry is checked and unsealed), or
// the platform's own code. options apply to a source file only: code is compiled already.
func ReadModuleFile(path string, options ...string) (*Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read module: %w", err)
	}
	if sourceExt[strings.ToLower(filepath.Ext(path))] {
		return NewModule(string(b), options...), nil
	}
	if len(options) > 0 {
		return nil, fmt.Errorf("read module %s: %w: compiler options given for compiled code", path, ErrInvalidArgument)
	}
	code, err := compute.CodeOfFile(filepath.Base(path), b)
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", path, err)
	}
	if len(code) == 0 {
		return nil, fmt.Errorf("read module %s: %w: the file is empty", path, ErrInvalidArgument)
	}
	return NewModuleFromCode(code), nil
}

// codeKernel is Kernel of a module given as code: the options it cannot use (compiler
// options, name expressions) are ignored; IO is the caller's, none when not given.
func (m *Module) codeKernel(entry string, opts []KernelOption) *Kernel {
	spec := kernelSpec{block: defaultBlock}
	for _, o := range opts {
		if o != nil {
			o(&spec)
		}
	}
	if spec.block == (Dim3{}) {
		spec.block = defaultBlock
	}
	k := compute.NewCodeKernel(m.k.Code, entry, shape(spec.block), spec.io)
	k.SharedMem = spec.shared
	k.Cooperative = spec.coop
	return &Kernel{k: k}
}

// ModuleCode compiles c's module for the device now (or reads it from the kernel disk
// cache) and returns its code as the device's ModuleLoadData takes it, without loading
// it: what NewModuleFromCode takes in another process, or `cubehip compile -o` writes.
// A module with name expressions loses their symbols: its kernels are then taken by
// their symbols. A mistake in the source is a *CompileError.
func (d *Device) ModuleCode(c Code) ([]byte, error) {
	k, err := codeOf(c, "module code", "")
	if err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	return d.srv.ModuleCode(k)
}
