package compute

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// CompileError is a kernel that failed to compile: the platform's compiler, its log
// (in the user's terms: line numbers in the kernel's source, without the lines about
// the wrapper the platform compiles it in) and the source. It matches ErrCompilation,
// and unwraps to the compile call's *hipsys.Error.
type CompileError struct {
	Entry    string
	Compiler string // the platform's compiler: "g++" (cpu), "hiprtc" (amd), "NVRTC" (nvidia)
	Log      string
	Source   string
	Err      error
}

// Error is the log once, under one line naming the kernel and the compiler; the source
// is left to the Source field (the user has it, and its lines are what the log cites).
func (e *CompileError) Error() string {
	var b strings.Builder
	if e.Entry == "" {
		fmt.Fprintf(&b, "module failed to compile (%s)", e.Compiler)
	} else {
		fmt.Fprintf(&b, "kernel %q failed to compile (%s)", e.Entry, e.Compiler)
	}
	if strings.TrimSpace(e.Log) == "" {
		fmt.Fprintf(&b, ": %v", e.Err)
		return b.String()
	}
	b.WriteString(":\n")
	for line := range strings.Lines(e.Log) {
		b.WriteString("    ")
		b.WriteString(line)
	}
	return strings.TrimRight(b.String(), "\n")
}

// compilers names each platform's compiler, as a compile error reports it.
var compilers = map[string]string{"cpu": "g++", "amd": "hiprtc", "nvidia": "NVRTC"}

// userLog is a compiler log without the lines that speak of the wrapper a platform
// compiles the user's kernel in (the cpu device runs a kernel's body in a lambda, its
// prelude's macros are named CUBEHIP_...): they cite nothing the user wrote.
func userLog(log string) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		if strings.Contains(line, "In lambda function") || strings.Contains(line, "CUBEHIP_") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func (e *CompileError) Unwrap() error        { return e.Err }
func (e *CompileError) Is(target error) bool { return target == ErrCompilation }

// Compile compiles k for the device now, or loads it from the kernel caches, and
// returns its entry point: a mistake in its source is then reported here, as a
// *CompileError with the compiler's log, rather than carried by the outputs of its first
// launch. Launch compiles on first use anyway.
func (s *Server) Compile(k *Kernel) (hipsys.Function, error) {
	if k == nil {
		return 0, fmt.Errorf("%w: nil kernel", ErrInvalidArgument)
	}
	ck, err := s.kernels.load(k)
	if err != nil {
		return 0, err
	}
	return ck.fn, nil
}

// LoadModule compiles and loads k's module now (or loads it from the kernel caches), for
// a ModuleOf or any kernel of the module: a mistake in the source is reported here, and
// every kernel of the module then launches without compiling.
func (s *Server) LoadModule(k *Kernel) error {
	if k == nil {
		return fmt.Errorf("%w: nil module", ErrInvalidArgument)
	}
	_, err := s.kernels.module(k)
	return err
}

// ModuleCode is the code of k's module as this device's ModuleLoadData takes it,
// compiled now (or read from the kernel disk cache, and written there), without loading
// it: what `cubehip compile` writes to a file for NewCodeKernel to load in another
// process. The symbols of the module's name expressions are not part of it: a kernel of
// the code is taken by its symbol. A module given as code is returned as it is.
func (s *Server) ModuleCode(k *Kernel) ([]byte, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil module", ErrInvalidArgument)
	}
	if k.Code != nil {
		return append([]byte(nil), k.Code...), nil
	}
	c := s.kernels
	entry := c.disk.entryName(k)
	if code, _ := unpackNames(c.disk.read(entry), k.Names); code != nil {
		return code, nil
	}
	code, lowered, err := c.compile(k)
	if err != nil {
		return nil, err
	}
	c.disk.write(entry, packNames(code, k.Names, lowered))
	return code, nil
}

// Loaded reports whether k is compiled and loaded on this server: a launch of it then
// compiles nothing.
func (s *Server) Loaded(k *Kernel) bool {
	return k != nil && s.kernels.m[k.ID()] != nil
}

// FailLaunch is a launch of k refused before it was queued, with the error its caller
// already holds (Params or Compile failed for k): the buffers k writes carry err, as
// Launch leaves them when k fails to compile, without compiling k again to learn what
// the caller knows, and the stream's next Sync reports it (TakeFailure), also where k
// writes none of buffers (a kernel with no output, one that only prints), which nothing
// else could carry. buffers must match k's IO, as Launch's do, or be empty (a launch
// whose arguments could not be sorted: it fails no buffer). FailLaunch returns err, for
// the caller to return: the first launch of a kernel that does not compile reports it.
func (s *Server) FailLaunch(k *Kernel, buffers []Binding, id StreamID, err error) error {
	if k == nil || err == nil {
		return err
	}
	_, written := s.splitIO(k, buffers)
	// FailedWriting runs the failure hook even for an empty list: the Sync's record.
	s.streams.FailedWriting(id, written, err)
	s.clearIO()
	return err
}

// compiled is a loaded kernel: its module (shared by the kernels of its source and
// options, never unloaded before Close, as in CubeCL: a module is small and a later
// launch of the same kernel would reload it), its entry point, and its parameters as
// the platform's compiler laid them out, nil where the platform cannot tell
// (hipsys.Platform.FuncGetParams).
type compiled struct {
	module hipsys.Module
	fn     hipsys.Function
	params []hipsys.KernelParam
}

// fits checks a launch's arguments against ck's parameters, when known: one parameter
// per buffer, scalar and info pointer, each of the size the kernel takes, and a pointer
// where the kernel takes one. Without the check, a launch with too few or too many
// arguments, or a scalar of the wrong width, would run on whatever the parameter block
// held, or fail on the device long after Launch returned, the failure then landing on
// unrelated later work.
func (ck *compiled) fits(k *Kernel, args *Args) error {
	if len(args.Scalars) == 1 && args.Scalars[0].ordered() {
		// The Device checked these arguments in the kernel's own order already
		// (Server.Params); one layout scalar carries them all.
		return nil
	}
	n := len(args.Buffers) + len(args.Scalars)
	if args.HasInfo || len(args.Info) > 0 {
		n++
	}
	if n != len(ck.params) {
		return fmt.Errorf("%w: kernel %q takes %d parameters, launch gives %d (%d buffers, %d scalars%s)",
			ErrInvalidArgument, k.Entry, len(ck.params), n, len(args.Buffers), len(args.Scalars), infoNote(args))
	}
	for i, p := range ck.params {
		size, pointer := uint32(8), true
		if j := i - len(args.Buffers); j >= 0 && j < len(args.Scalars) {
			size, pointer = args.Scalars[j].Size(), false
		}
		if p.Size != size || (p.Kind == hipsys.ParamPointer && !pointer) || (p.Kind == hipsys.ParamValue && pointer) {
			return fmt.Errorf("%w: kernel %q parameter %d %q takes %d bytes (%s), launch gives %d (%s)",
				ErrInvalidArgument, k.Entry, i, p.Name, p.Size, kindName(p.Kind), size, map[bool]string{true: "a pointer", false: "a scalar"}[pointer])
		}
	}
	return nil
}

func infoNote(args *Args) string {
	if args.HasInfo || len(args.Info) > 0 {
		return ", the info pointer"
	}
	return ""
}

func kindName(k hipsys.ParamKind) string {
	switch k {
	case hipsys.ParamPointer:
		return "a pointer"
	case hipsys.ParamValue:
		return "a value"
	}
	return "of a kind the platform does not say"
}

// kernelCache is the server's compiled kernels (CubeCL's is_loaded / compile_kernel):
// in memory by KernelID, and on disk by id, platform, architecture and the compiler's
// code identity (diskcache.go) so that a second process loads the code object without
// compiling. It is used by the server's owner only.
type kernelCache struct {
	// The kernel launched last and what it loaded as: a loop of one kernel's launches
	// compares a pointer instead of hashing 32 bytes into the map (whose lines a driver
	// call between two launches has evicted). Reset by close. First, with the map, so
	// that a launch reads one cache line of the cache.
	lastK  *Kernel
	lastCK *compiled
	m      map[KernelID]*compiled
	mods   map[ModuleID]*loadedModule // each module loaded once, its kernels' shared code

	p    hipsys.Platform
	arch string
	disk *diskCache // nil: no disk cache
	log  *slog.Logger
	// extra are Config.CompileOptions, appended to every module's own.
	extra []string

	observe func(KernelLoad) // ObserveLoads' observer, nil when none
}

func newKernelCache(p hipsys.Platform, props hipsys.DeviceProps, dir string, log *slog.Logger, extra []string) *kernelCache {
	c := &kernelCache{
		p: p, arch: props.ArchName, log: log, extra: extra,
		disk: openDiskCache(dir, p, props.ArchName, log),
		m:    make(map[KernelID]*compiled),
	}
	if c.disk != nil {
		c.disk.extra = extra
	}
	return c
}

// options are what k's module compiles with here: its own, then the server's
// (Config.CompileOptions).
func options(k *Kernel, extra []string) []string {
	if len(extra) == 0 {
		return k.Options
	}
	return append(append([]string(nil), k.Options...), extra...)
}

// get is k's loaded code, nil if it never compiled here: a pointer comparison when k was
// the kernel launched last, else a map lookup, which is all a launch after the first pays.
func (c *kernelCache) get(k *Kernel) *compiled {
	if k == c.lastK {
		return c.lastCK
	}
	ck := c.m[k.ID()]
	if ck != nil {
		c.lastK, c.lastCK = k, ck
	}
	return ck
}

// slowCompile is how long a compile takes before it is logged at info level.
var slowCompile = 500 * time.Millisecond

// load is k's entry point in its module, compiling and loading the module first if
// this server has not (module); a module whose code has no entry of k's name is a
// compile error naming the ones the source defines. There is no negative cache, as in
// CubeCL: a failed kernel is compiled again by its next launch, so a fixed include or a
// freed resource is picked up.
func (c *kernelCache) load(k *Kernel) (_ *compiled, err error) {
	id := k.ID()
	if ck := c.m[id]; ck != nil {
		return ck, nil
	}
	mod, err := c.module(k)
	if err != nil {
		return nil, err
	}
	ck, err := c.function(k, mod)
	if err != nil {
		return nil, err
	}
	c.m[id] = ck
	return ck, nil
}

// loadedModule is a module loaded on the server, and the symbol the compile gave each
// of its name expressions (Kernel.Names).
type loadedModule struct {
	mod     hipsys.Module
	lowered map[string]string
}

// module is k's module, loaded: compiled once per server (disk cache first, then the
// platform's compiler) and loaded once, whichever of its kernels asked first, so that
// every kernel of a source shares its device and constant variables and N kernels of
// one source cost one compile.
func (c *kernelCache) module(k *Kernel) (_ *loadedModule, err error) {
	mid := k.Module()
	if lm, ok := c.mods[mid]; ok {
		return lm, nil
	}
	if k.Code != nil {
		// Compiled ahead of time: loaded as it is, never compiled nor cached on disk. A
		// refusal is the code's (another device's, another platform's, not code at all),
		// not a compile error.
		mod, err := c.p.ModuleLoadData(k.Code)
		if err != nil {
			return nil, fmt.Errorf("server: load module %s (%d bytes of compiled code) on %s: %w", mid, len(k.Code), c.p.Name(), err)
		}
		return c.keep(mid, mod, nil), nil
	}
	cached := false
	if c.observe != nil {
		defer c.observed(k, time.Now(), &cached, &err)
	}
	entry := c.disk.entryName(k)
	code, lowered := unpackNames(c.disk.read(entry), k.Names)
	if entry != "" {
		c.log.Debug("server: kernel disk cache "+map[bool]string{true: "hit", false: "miss"}[code != nil], "kernel", k.Entry, "platform", c.p.Name())
	}
	if code != nil {
		mod, err := c.p.ModuleLoadData(code)
		if err == nil {
			cached = true
			return c.keep(mid, mod, lowered), nil
		}
		// The code is intact but this device or driver refuses it (one the code
		// identity does not cover): compile afresh and overwrite it rather than fail a
		// kernel that compiles.
		c.log.Warn("server: cached code object did not load; recompiling", "kernel", k.Entry, "err", err)
	}
	start := time.Now()
	code, lowered, err = c.compile(k)
	if err != nil {
		return nil, err
	}
	if took := time.Since(start); took > slowCompile {
		// One line for a wait a user would notice, so a slow first launch is explained.
		c.log.Info("server: compiled kernel", "kernel", k.Entry, "platform", c.p.Name(), "took", took.Round(time.Millisecond))
	}
	c.disk.write(entry, packNames(code, k.Names, lowered))
	mod, err := c.p.ModuleLoadData(code)
	if err != nil {
		return nil, fmt.Errorf("server: load kernel %q: %w", k.Entry, err)
	}
	return c.keep(mid, mod, lowered), nil
}

func (c *kernelCache) keep(mid ModuleID, mod hipsys.Module, lowered map[string]string) *loadedModule {
	if c.mods == nil {
		c.mods = make(map[ModuleID]*loadedModule)
	}
	lm := &loadedModule{mod: mod, lowered: lowered}
	c.mods[mid] = lm
	return lm
}

// compile runs the platform's compiler on k's module, and resolves its name
// expressions (Kernel.Names) to the symbols the compile gave them. The program is
// always destroyed (CubeCL leaks it).
func (c *kernelCache) compile(k *Kernel) ([]byte, map[string]string, error) {
	compiler := c.compilerName()
	name := k.Entry
	if name == "" || !identifierName(name) {
		name = "module" // a name expression is no file name
	}
	fail := func(err error, log string) ([]byte, map[string]string, error) {
		return nil, nil, &CompileError{Entry: k.Entry, Compiler: compiler, Log: log, Source: k.Source, Err: err}
	}
	prog, err := c.p.RTCCreateProgram(k.Source, name+".hip", nil)
	if err != nil {
		return fail(err, "")
	}
	defer func() { _ = c.p.RTCDestroyProgram(prog) }()
	for _, expr := range k.Names {
		if err := c.p.RTCAddNameExpression(prog, expr); err != nil {
			return fail(err, fmt.Sprintf("the name expression %q: %v", expr, err))
		}
	}
	if err := c.p.RTCCompileProgram(prog, options(k, c.extra)); err != nil {
		log, lerr := c.p.RTCGetProgramLog(prog)
		if lerr != nil || log == "" {
			var he *hipsys.Error
			if errors.As(err, &he) {
				log = he.Detail
			}
		}
		return fail(err, userLog(log))
	}
	code, err := c.p.RTCGetCode(prog)
	if err != nil {
		return fail(err, "")
	}
	var lowered map[string]string
	for _, expr := range k.Names {
		sym, err := c.p.RTCGetLoweredName(prog, expr)
		if err != nil {
			return fail(err, fmt.Sprintf("the name expression %q has no symbol: %v", expr, err))
		}
		if lowered == nil {
			lowered = make(map[string]string, len(k.Names))
		}
		lowered[expr] = sym
	}
	return code, lowered, nil
}

// identifierName reports whether s is a C identifier (a kernel's name that is also a
// fine file name), not a name expression.
func identifierName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// compilerName is the platform's compiler, as a compile error names it.
func (c *kernelCache) compilerName() string {
	if name := compilers[c.p.Name()]; name != "" {
		return name
	}
	return c.p.Name() + "'s compiler"
}

// close unloads every module. The device must be done with them (Server.Close's
// caller waited for its streams).
func (c *kernelCache) close() {
	c.lastK, c.lastCK = nil, nil
	clear(c.m)
	for id, lm := range c.mods {
		_ = c.p.ModuleUnload(lm.mod)
		delete(c.mods, id)
	}
}

// function is k's entry point in mod, its module, and its parameters as the platform
// lists them. The module stays loaded whatever happens here: its other kernels, and its
// variables, are still good.
func (c *kernelCache) function(k *Kernel, lm *loadedModule) (*compiled, error) {
	symbol := k.Entry
	if sym, ok := lm.lowered[k.Entry]; ok {
		symbol = sym // a name expression: the symbol its compile gave it
	}
	mod := lm.mod
	fn, err := c.p.ModuleGetFunction(mod, symbol)
	if err != nil {
		if errors.Is(err, hipsys.ErrorNotFound) && k.Code != nil {
			// Compiled code has no source to name its kernels from: the entry is wrong
			// or the code is another module's.
			return nil, fmt.Errorf("server: kernel %q: the module's code (%s) has no such kernel: %w", k.Entry, "module "+k.Module().String(), err)
		}
		if errors.Is(err, hipsys.ErrorNotFound) {
			// The source compiled but has no such kernel: the user's mistake, reported as
			// a compile error (a linker's "undefined symbol"), not as a failure to load.
			return nil, &CompileError{Entry: k.Entry, Compiler: c.compilerName(), Source: k.Source, Err: err,
				Log: missingEntryLog(k.Entry, k.Source)}
		}
		return nil, fmt.Errorf("server: kernel %q: entry point: %w", k.Entry, err)
	}
	// Parameters the platform cannot list leave launches unchecked, as before it could.
	params, err := c.p.FuncGetParams(fn)
	if err != nil {
		c.log.Debug("compute: kernel parameters unknown; launches are not checked against them", "kernel", k.Entry, "err", err)
		params = nil
	}
	return &compiled{module: mod, fn: fn, params: params}, nil
}
