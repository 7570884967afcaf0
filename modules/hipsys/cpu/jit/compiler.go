package jit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const callCompile = "hiprtcCompileProgram"

// Compiler is the cpu platform's hiprtc: it turns HIP C++ into code objects that Load
// takes, through the host C++ compiler, and remembers them in memory and on disk. It is
// safe for concurrent use; two goroutines compiling the same program share one compiler
// run.
//
// The source is compiled as C++17 by $CXX (else c++; it may carry arguments, "ccache
// g++") with -O3 -march=native -mprefer-vector-width=512 (full-width vectors where the
// host has AVX-512; compiler.go says why) -fPIC -shared and $CUBEHIP_CPU_CXXFLAGS, with
// prelude/cubehip_prelude.h force-included (<hip/hip_runtime.h> maps to it too, so
// sources compile with or without the include). Options: -D, -U, -I, -O*, -std=c++17 and
// later, -ffast-math are honoured; GPU code-generation options (--offload-arch,
// -fgpu-rdc, --gpu-architecture, ...) are ignored.
//
// A source with #if, #ifdef or #ifndef is first run through the compiler's preprocessor
// (GCC's -fdirectives-only: directives evaluated, macros left alone), so a kernel in a
// disabled block is not an entry. <hip/*.h> names resolve to cubehip's own headers
// (hip_fp16.h, hip_bf16.h, hip_cooperative_groups.h, the rest to the prelude), never to a
// system ROCm installation.
//
// Two constructs are refused before the compiler runs, with RTCErrorCompilation and a
// log that names them and their lines. A kernel launch in device code (`child<<<g, b>>>`,
// CUDA's dynamic parallelism, which HIP does not have) is refused by every platform alike
// (hipsys.DeviceLaunchLog). Implicit warp-synchronous code (warpsync.go) is refused here
// only: a shared array or volatile pointer that one statement writes at a thread's index
// and another reads at a different thread-dependent index with no barrier, __syncwarp,
// warp function or group sync between them, as in the unrolled last warp of a
// shared-memory reduction. It relies on a warp's lanes running in lockstep, as AMD's
// wavefronts do; here they run one after another between barriers, which would give
// wrong answers. Code whose threads share through shared memory only across barriers is
// never refused; sharing the scan cannot see (a plain pointer parameter of a helper, an
// alias under another name) is not caught.
//
// Before compiling, the source is scanned (entries.go) for its extern "C" __global__
// definitions (also inside extern "C" { } blocks and namespaces, with __launch_bounds__
// before or after __global__); templates and C++-linkage kernels are not entries by their
// own names, as on the GPU platforms. With name expressions (CompileNamed; hiprtc's
// hiprtcAddNameExpression), their bodies are wrapped as the entries' are, and each
// expression naming a kernel gets a launcher that Module.Function finds by the symbol the
// C++ compiler gave it, its lowered name (names.go). Each entry body is wrapped in CUBEHIP_THREADS_BEGIN/END: the
// original body becomes a lambda taking blockIdx and threadIdx (blockDim and gridDim are
// locals it captures), called once per thread by loops over the blocks of the call's
// range and their threads (so `return` ends a thread and each thread has its own copy of
// the parameters). The x loop runs over the int index blockIdx.x*blockDim.x+threadIdx.x
// when that cannot wrap, so GCC splits `if (i < n)` out of it and vectorizes the rest
// without masks (cubehip_entry.h says why); over that index plus C when the body declares
// `int x = blockIdx.x * blockDim.x + threadIdx.x + C` (a stencil's interior point,
// indexoffset.go), so that a guard on x is one on the loop's counter too. `extern __shared__ T a[];` becomes a
// pointer to the running block's dynamic shared buffer and each static __shared__
// declaration a reference into the block's shared arena (sharedmem.go; one OS thread runs
// one block at a time). A launcher per entry is appended to the
// translation unit. Line numbers are kept, so the compile log points at the user's lines.
//
// The prelude is precompiled (GCC's precompiled headers) once per set of code-generation
// flags and modes, in the background after the first compile that needs it, under
// DefaultCacheDir/cpu-v1/pch; later compiles load it instead of parsing the prelude
// (pch.go; CUBEHIP_CPU_PCH=0 turns it off).
//
// Code objects are cached by a hash of the source, headers, options, the compiler's
// identity, $CUBEHIP_CPU_CXXFLAGS, the warp width, the CPU's features and the prelude:
// in memory per Compiler and on disk under <cacheDir>/cpu-v1 (files written atomically,
// so processes may share the directory). CodeIdentity is that hash without the program,
// for a cache kept above this one. A cache hit runs no compiler at all: the compiler's
// --version output is itself cached, keyed by the binary's path, size and modification
// time. What is cached is loaded into the process, so nothing is taken from the cache
// unchecked: each object is stored with a SHA-256 of its key and bytes, verified before
// use (a damaged one is compiled again), directories are created 0700 and files 0600,
// and a cache directory another user owns or others can write to is not used (one
// warning, then a private temporary directory for the process).
type Compiler struct {
	cacheDir string // its files are in workDir(cacheDir)

	mu     sync.Mutex
	memory map[string][]byte  // key -> image
	flight map[string]*flight // key -> compile in progress
}

type flight struct {
	done  chan struct{}
	image []byte
	log   string
	err   error
}

// NewCompiler makes a compiler caching under cacheDir ("" = DefaultCacheDir()). Nothing
// is touched until the first Compile.
func NewCompiler(cacheDir string) *Compiler {
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	return &Compiler{cacheDir: cacheDir, memory: map[string][]byte{}, flight: map[string]*flight{}}
}

// root is the directory the compiler keeps its files in (workDir).
func (c *Compiler) root() string { return workDir(c.cacheDir) }

// Compile compiles source (name is the file name compiler messages use) with the
// in-memory headers and hiprtc options, and returns the code object and the compiler's
// log (warnings on success; empty when the object came from a cache). On a compile error
// it returns the log and an *hipsys.Error with RTCErrorCompilation whose Detail is the
// log's first lines. The returned image is the caller's to keep and modify.
//
// A cached object (in this process, or on disk from any process) is returned without
// running the compiler. It blocks for the length of the compile (about a second with g++
// -O3) otherwise.
func (c *Compiler) Compile(source, name string, headers []hipsys.Header, options []string) ([]byte, string, error) {
	return c.CompileNamed(source, name, headers, options, nil)
}

// CompileNamed is Compile with the program's name expressions (names.go): each is
// resolved by the C++ compiler, and the code object records its lowered name
// (LoweredNames) and, for a kernel, a launcher that Module.Function finds by that name.
// An expression that resolves to nothing fails the compile, the log saying why.
func (c *Compiler) CompileNamed(source, name string, headers []hipsys.Header, options, exprs []string) ([]byte, string, error) {
	for _, e := range exprs {
		if strings.TrimSpace(e) == "" || strings.ContainsRune(e, 0) {
			return nil, "", hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorInvalidInput, "name expression "+strconv.Quote(e)+" is empty or holds a NUL")
		}
	}
	// g++ would read child<<<g, b>>>() as shifts and fail with a syntax error; every
	// platform refuses dynamic parallelism with the same log instead.
	if refused := hipsys.DeviceLaunchLog(source, sourceName(name), headers); refused != "" {
		return nil, refused, hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorCompilation, refused)
	}
	tc, err := findToolchain(c.root())
	if err != nil {
		return nil, "", hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorInternalError, err.Error())
	}
	hs := make([]header, len(headers))
	for i, h := range headers {
		if !validHeaderName(h.Name) {
			return nil, "", hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorInvalidInput, "header name "+h.Name+" must be a relative path inside the include directory")
		}
		hs[i] = header{h.Name, h.Source}
	}
	key := cacheKey(codeKey(tc, options), hs, source)
	if len(exprs) > 0 {
		key = namedKey(key, exprs)
	}

	c.mu.Lock()
	if img, ok := c.memory[key]; ok {
		c.mu.Unlock()
		return bytes.Clone(img), "", nil
	}
	if f, ok := c.flight[key]; ok {
		c.mu.Unlock()
		<-f.done
		return bytes.Clone(f.image), f.log, f.err
	}
	f := &flight{done: make(chan struct{})}
	c.flight[key] = f
	c.mu.Unlock()

	f.image, f.log, f.err = c.compileMiss(tc, key, source, name, hs, options, exprs)
	c.mu.Lock()
	delete(c.flight, key)
	if f.err == nil {
		c.memory[key] = f.image
	}
	c.mu.Unlock()
	close(f.done)
	return bytes.Clone(f.image), f.log, f.err
}

// CodeIdentity is what, besides the program (source and headers), decides the object
// Compile builds with options (codeKey: the prelude, the compiler and its version,
// $CUBEHIP_CPU_CXXFLAGS, the warp width, the host CPU, the options), as a hash: a cache
// of code objects kept above this one keys on it, or it would hand out an object this
// Compile would no longer build. The compiler's --version is asked once per process and
// $CXX value (and kept on disk across processes); the rest costs a hash. It fails, as
// Compile would, when there is no compiler.
func (c *Compiler) CodeIdentity(options []string) (string, error) {
	tc, err := findToolchain(c.root())
	if err != nil {
		return "", hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorInternalError, err.Error())
	}
	return codeKey(tc, options), nil
}

// compileMiss looks on disk, then compiles and stores.
func (c *Compiler) compileMiss(tc *toolchain, key, source, name string, headers []header, options, exprs []string) ([]byte, string, error) {
	path := filepath.Join(c.root(), "obj", key[:2], key+".img")
	if img, ok := unsealObject(key, readCached(path)); ok {
		if _, err := decodeImage(img); err == nil {
			touch(path) // recently used, for the size cap's eviction order
			return img, "", nil
		}
	}
	img, log, err := c.build(tc, source, name, headers, options, exprs)
	if err != nil {
		return nil, log, err
	}
	// Best effort: a read-only cache only costs the next process a compile.
	if sealed := sealObject(key, img); writeAtomic(path, sealed) == nil {
		grewCache(c.cacheDir, int64(len(sealed)))
	}
	return img, log, nil
}

// build runs the compiler in a scratch directory: the (rewritten) source plus the
// generated launchers as one translation unit, the headers beside it.
func (c *Compiler) build(tc *toolchain, source, name string, headers []header, options, exprs []string) ([]byte, string, error) {
	internal := func(err error) error {
		return hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorInternalError, err.Error())
	}
	root := c.root()
	inc, err := includeDir(root)
	if err != nil {
		return nil, "", internal(err)
	}
	tmp, err := os.MkdirTemp(root, ".build-*")
	if err != nil {
		return nil, "", internal(err)
	}
	defer os.RemoveAll(tmp)
	for _, h := range headers {
		p := filepath.Join(tmp, "headers", h.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, "", internal(err)
		}
		if err := os.WriteFile(p, []byte(h.source), 0o600); err != nil {
			return nil, "", internal(err)
		}
	}
	checks, options := takeChecks(options)
	if checks != 0 && strings.Contains(tc.identity, "clang") {
		// The checker's instrumentation is GCC's (its flags and the runtime interface the
		// prelude implements; clang's alignment sanitizer, run before it vectorizes, would
		// also cost the vectorized loops its AddressSanitizer keeps: docs/benchmarks.md,
		// "Kernel checker (2026-12-05)").
		why := "kernel checks compile with GCC: set $CXX to g++ (it is " + tc.argv[0] + ")"
		return nil, why, hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorCompilation, why)
	}
	opt, user := compilerFlags(options)
	file := sourceName(name)
	// instr are the checks the code is instrumented for (check.go's instrumentedFor).
	instr := instrumentedFor(checks, source, headers, user)
	// codegen are the flags that decide the code, paths aside.
	codegen := append(append([]string{}, baseFlags(opt)...), "-DCUBEHIP_WARP_SIZE="+strconv.Itoa(WarpSize))
	codegen = append(codegen, extraFlags()...)
	if checks != 0 {
		codegen = append(codegen, checkFlags(instr)...)
	}
	// The flags that decide what the preprocessor keeps: every compile flag but the
	// modes, which the scan decides next and which change nothing in the user's lines.
	common := append([]string{}, codegen...)
	common = append(common, "-I", filepath.Join(tmp, "headers"), "-I", inc)
	common = append(common, user...)
	common = append(common, "-include", filepath.Join(inc, "cubehip_prelude.h"))
	var live map[int]bool
	if conditional.MatchString(source) {
		if err := os.WriteFile(filepath.Join(tmp, file), []byte(source), 0o600); err != nil {
			return nil, "", internal(err)
		}
		live = liveLines(tc, tmp, file, source, ppFlags(common))
	}
	prog := scanLive(source, live, len(exprs) > 0)
	if checks != 0 {
		prog.check(instr)
	}
	prog.exprs = exprs
	// Implicit warp-synchronous code would run with wrong results (warpsync.go): refused.
	refused := warpSynchronous(source, file, live)
	for _, h := range headers {
		if refused == "" {
			refused = warpSynchronous(h.source, h.name, nil)
		}
	}
	if refused != "" && checks&hipsys.CheckRace == 0 {
		return nil, refused, hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorCompilation, refused)
	}
	// Under racecheck such code runs, and its hazards are reported with both threads and
	// both lines: what the refusal says, seen.
	for _, h := range headers {
		prog.barrier = prog.barrier || strings.Contains(h.source, "__syncthreads")
		if namesWarp(h.source) {
			prog.warps, prog.barrier, prog.tlsBuiltins = true, true, true
		}
		prog.tlsBuiltins = prog.tlsBuiltins || builtinsOutside(h.source, nil)
	}
	for _, f := range user {
		// Headers from a directory the jit cannot read ahead may use threadIdx in
		// __device__ functions too.
		prog.tlsBuiltins = prog.tlsBuiltins || strings.HasPrefix(f, "-I")
	}
	prog.withHeaders(headers)
	if err := os.WriteFile(filepath.Join(tmp, file), []byte(prog.rewritten+prog.tail()), 0o600); err != nil {
		return nil, "", internal(err)
	}
	prelude := preludeDir(tc, inc, codegen)
	// The modes follow the program: a fallback to fibers may need the thread-local index.
	argv := func() []string {
		modes := []string{"-DCUBEHIP_TLS_BUILTINS=" + boolFlag(prog.tlsBuiltins), "-DCUBEHIP_WARPS=" + boolFlag(prog.warps)}
		args := append([]string{}, tc.argv[1:]...)
		args = append(args, codegen...)
		args = append(args, modes...)
		args = append(args, "-I", filepath.Join(tmp, "headers"), "-I", prelude)
		args = append(args, user...)
		// The precompiled part first: GCC loads a precompiled header only as the first include.
		args = append(args, "-include", filepath.Join(prelude, pchHeader), "-include", filepath.Join(prelude, "cubehip_prelude.h"))
		if instrumented(instr) {
			// Compiled here, linked below without the sanitizer's runtime (check.go).
			return append(args, "-c", "-o", "kernel.o", file)
		}
		return append(args, "-o", "kernel.so", file)
	}
	cmd := exec.CommandContext(context.Background(), tc.argv[0], argv()...)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if runErr != nil && prog.regions() {
		// The rewrite into regions must never turn a kernel that compiles into one that
		// does not: compile the fibers' version, whose errors are the user's own.
		prog.fallBack("its regions did not compile")
		if err := os.WriteFile(filepath.Join(tmp, file), []byte(prog.rewritten+prog.tail()), 0o600); err != nil {
			return nil, "", internal(err)
		}
		cmd = exec.CommandContext(context.Background(), tc.argv[0], argv()...)
		cmd.Dir = tmp
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		runErr = cmd.Run()
	}
	if runErr == nil && instrumented(instr) {
		link := append([]string{}, tc.argv[1:]...)
		link = append(link, linkFlags()...)
		link = append(link, "-o", "kernel.so", "-x", "none", "kernel.o")
		cmd = exec.CommandContext(context.Background(), tc.argv[0], link...)
		cmd.Dir = tmp
		cmd.Stdout, cmd.Stderr = &out, &out
		runErr = cmd.Run()
	}
	prog.logModes(name)
	log := userExcerpts(strings.ReplaceAll(out.String(), tmp+string(filepath.Separator), ""), file, source)
	if runErr != nil {
		var exit *exec.ExitError
		if !errors.As(runErr, &exit) {
			return nil, log, internal(runErr)
		}
		return nil, log, hipsys.NewRTCError("cpu", callCompile, hipsys.RTCErrorCompilation, firstLines(log, 12))
	}
	obj, err := os.ReadFile(filepath.Join(tmp, "kernel.so"))
	if err != nil {
		return nil, log, internal(err)
	}
	im := &image{object: obj}
	if prog.fibers() {
		im.flags |= flagBarrier
	}
	im.flags |= uint32(checks) << flagChecksShift
	if inlineShadow(instr) {
		im.flags |= flagShadow
	}
	for _, e := range prog.entries {
		im.entries = append(im.entries, e.Name)
	}
	if im.names, err = prog.nameRecords(obj); err != nil {
		return nil, log, internal(err)
	}
	return im.encode(), log, nil
}

// baseFlags are the compiler flags of every kernel object (and of the benchmark's C
// anchor, which must be built the same way to be a fair comparison).
func baseFlags(opt string) []string {
	return []string{"-x", "c++", "-std=c++17", opt, "-march=native", "-fPIC", "-shared", "-pipe", "-g0",
		// Full-width vectors where the host has AVX-512: GCC tunes Intel's server cores for
		// 256-bit ones (a clock penalty of older generations), and the region loops that
		// run a block's threads are exactly the wide, regular loops that repay 512
		// (docs/benchmarks.md, "cpu device: 512-bit vectors and the pool's wake-ups").
		// No effect on a host without AVX-512.
		"-mprefer-vector-width=512",
		// Kernels never read errno, and without it sqrtf and friends become instructions.
		"-fno-math-errno",
		// Only the generated launchers are exported; a kernel's own symbols stay private.
		"-fvisibility=hidden",
		// An undefined symbol fails here, with a message, instead of at dlopen.
		"-Wl,-z,defs",
		// Left at GCC's default: if-conversion. `if (i < n) ...` with an int i is split
		// out of the thread loop instead (cubehip_entry.h), leaving unmasked vectors. Other
		// guards (an unsigned or 64-bit index) GCC vectorizes with AVX-512 masks, faster
		// in cache and slower streaming than scalar code (-fno-tree-loop-if-convert;
		// docs/benchmarks.md, "cpu device: the thread loop split at its guard").
		// -fopenmp-simd with `omp simd` on the thread loop vectorizes nothing: GCC
		// privatizes the lambda's closure per lane before inlining it. $CUBEHIP_CPU_CXXFLAGS
		// chooses otherwise.
	}
}

// ppFlags drops from compile flags those that only concern code generation and linking,
// which a preprocessor-only run warns about or rejects.
func ppFlags(flags []string) []string {
	var out []string
	for _, f := range flags {
		if f == "-shared" || f == "-fPIC" || f == "-pipe" || strings.HasPrefix(f, "-Wl,") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// extraFlags are $CUBEHIP_CPU_CXXFLAGS, appended after the jit's own so they can override
// them; they are part of the cache key.
func extraFlags() []string { return strings.Fields(os.Getenv("CUBEHIP_CPU_CXXFLAGS")) }

// sourceName is the file the source is written to, after the program's name so compiler
// messages read "saxpy.hip:3:5: error: ...".
func sourceName(name string) string {
	base := filepath.Base(name)
	ok := base != "" && base != "." && base != "/" && base != "kernel.so"
	for i := 0; ok && i < len(base); i++ {
		ok = isIdent(base[i]) || base[i] == '.' || base[i] == '-'
	}
	if !ok {
		return "kernel.hip"
	}
	return base
}

var (
	diagnosticLine = regexp.MustCompile(`^([^:\s]+):(\d+):\d+: `)
	excerptLine    = regexp.MustCompile(`^(\s*)(\d+) \| `)
)

// userExcerpts puts the user's own text back into the source excerpts of a compiler log
// about file: the compiler quotes the line it compiled, and an entry's signature line
// carries the jit's wrapping after the user's text (the body's opening brace is followed
// by the thread loop's macro), which the user never wrote and the server's log filter
// drops with the whole excerpt. The user's text is a prefix of the compiled line, so the
// caret under it still points where the compiler said.
func userExcerpts(log, file, source string) string {
	lines := strings.Split(source, "\n")
	out := strings.Split(log, "\n")
	current := ""
	for i, l := range out {
		if m := diagnosticLine.FindStringSubmatch(l); m != nil {
			current = m[1]
			continue
		}
		m := excerptLine.FindStringSubmatch(l)
		if m == nil || current != file {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n < 1 || n > len(lines) {
			continue
		}
		out[i] = m[0] + strings.TrimRight(lines[n-1], "\r")
	}
	return strings.Join(out, "\n")
}

func boolFlag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func validHeaderName(n string) bool {
	if n == "" || filepath.IsAbs(n) {
		return false
	}
	clean := filepath.Clean(n)
	return clean != "." && clean != ".." && !strings.HasPrefix(clean, "../")
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

// linkFlags are what linking a checked module's object takes (compiler.build): the shared
// object, position-independent, every symbol resolved, and $CUBEHIP_CPU_CXXFLAGS's linker
// flags; no sanitizer, whose runtime the module must not need.
func linkFlags() []string {
	flags := []string{"-shared", "-fPIC", "-Wl,-z,defs"}
	for _, f := range extraFlags() {
		if strings.HasPrefix(f, "-Wl,") || strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") {
			flags = append(flags, f)
		}
	}
	return flags
}
