package jit

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t lo, base, size, hi;
	int32_t param;
	uint32_t freed;
	unsigned char* init;
} cubehip_go_check_region;

typedef struct {
	uint64_t addr, pc, pc2;
	uint32_t kind, size, write;
	int32_t region;
	uint32_t block[3], thread[3], thread2[3];
	const char* name;
	int64_t name_off;
} cubehip_go_check_report;

typedef struct {
	const cubehip_go_check_region* regions;
	uint32_t n, checks;
	uint64_t lo, hi;
	cubehip_go_check_report* reports;
	uint32_t cap;
	uint32_t count;
	uint64_t serial;
	const uint64_t *arena_min, *arena_max;
} cubehip_go_check_ctx;

extern uint64_t cubehip_arena_min, cubehip_arena_max;

static void cubehip_call_check_set(void* fn, cubehip_go_check_ctx* c) { ((void (*)(cubehip_go_check_ctx*))fn)(c); }
*/
import "C"

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The checker (cubehip_check.h says what the kernel's side does). A module compiled with
// the option CheckOption(c) is instrumented: under memcheck and initcheck,
// AddressSanitizer's inline shadow check asks the prelude's judge only about accesses to
// poisoned memory (shadow.go); under racecheck, where the code can reach shared memory,
// GCC's ThreadSanitizer instrumentation makes every load, store and atomic a call of the
// prelude's callbacks (instrumentedFor). No sanitizer runtime is linked: the callbacks
// are it. They judge an access against the launch's table of device memory (CheckRegion, from the cpu
// platform's allocations: each with redzones around it and kept after its release for a
// while, so an access past a buffer or through a released one lands in memory that is
// nobody's). Its barrier entries run as fibers, its entries keep the thread-local
// threadIdx current (the reports name the thread), and it carries the names of its
// entries' parameters and line tables (-g), so that a report reads in the source's terms.
// A checked launch's reports make it fail: hipErrorIllegalAddress for a memory access,
// hipErrorLaunchFailure for a barrier, with *hipsys.CheckReports as the error's Cause.
//
// Invariants:
//   - A checked module's kernels share one context in the module (the prelude's
//     check_ctx), so its launches run one at a time (Module.checkMu); an unchecked module
//     never takes the lock.
//   - The context, the region table and the report array are C memory, allocated before
//     the launch and freed after it, when no block of it runs any more.
//   - The option is part of the compile options, hence of every cache key: a checked and
//     an unchecked object of one source never stand for each other.

// launchSerial numbers checked launches: a block's shared-memory records start afresh
// when the launch (or the block) they were made in is not the one running.
var launchSerial atomic.Uint64

// checkOptionPrefix starts the compile option that asks for a checked module.
const checkOptionPrefix = hipsys.CheckOptionPrefix

// MaxCheckReports is how many reports a launch keeps: a bug in a hot loop would report
// once per thread, and the first few say it; the rest are counted.
const MaxCheckReports = 16

// CheckOption is the compile option that makes a module checked under c ("" for none):
// hipsys.CheckOption.
func CheckOption(c hipsys.Checks) string { return hipsys.CheckOption(c) }

// takeChecks finds the check options among options: the checks they ask for together
// (a Device's and $CUBEHIP_CHECK's may both be there) and the options without them.
func takeChecks(options []string) (hipsys.Checks, []string) {
	var c hipsys.Checks
	rest := options[:0:0]
	for _, o := range options {
		if v, ok := strings.CutPrefix(strings.TrimSpace(o), checkOptionPrefix); ok {
			more, _ := hipsys.ParseChecks(v)
			c |= more
			continue
		}
		rest = append(rest, o)
	}
	return c, rest
}

// checkFlags are the compiler flags of a module checked under c: line tables for the
// reports, and the instrumentation: memcheck and initcheck read the inline shadow
// (inlineShadow), racecheck makes every access a call of the prelude's callbacks, none
// of them on the stack or in globals (a kernel's locals and the module's variables are
// not device memory the table covers).
func checkFlags(c hipsys.Checks) []string {
	// A thread loop turned into one memcpy or memset (GCC's loop distribution) would be
	// one access of the whole range, by whichever thread the loop began with: each thread's
	// access stays its own.
	// The judge reads several of the module's thread-locals on every access it is called
	// for: from one base (a __tls_get_addr call per judge call, not one per variable).
	flags := []string{"-g", fmt.Sprintf("-DCUBEHIP_CHECK=%d", uint8(c)), "-fno-tree-loop-distribute-patterns",
		"-ftls-model=local-dynamic"}
	switch {
	case inlineShadow(c):
		flags = append(flags, fmt.Sprintf("-DCUBEHIP_CHECK_SHADOW=%#xull", uint64(shadowOffset)),
			"-fsanitize=kernel-address", fmt.Sprintf("-fasan-shadow-offset=%#x", uint64(shadowOffset)),
			// Every check inline, however many accesses a function has; none in globals,
			// whose redzones would need a runtime that registers them.
			"--param", "asan-instrumentation-with-call-threshold=1000000000",
			"--param", "asan-globals=0", "--param", "asan-use-after-return=0")
		if c&hipsys.CheckMemory != 0 {
			// Local arrays get redzones, marked and cleared inline by each frame's prologue
			// and epilogue (AddressSanitizer's stack magics; fault.c clears what a fault
			// leaves): an index past one reaches the judge.
			flags = append(flags, "--param", "asan-stack=1")
		} else {
			flags = append(flags, "--param", "asan-stack=0")
		}
		if c&hipsys.CheckMemory != 0 {
			// The shadow knows no alignment: a misaligned access, which faults on a GPU, is
			// the alignment sanitizer's (inline too), reported to the same judge.
			flags = append(flags, "-fsanitize=alignment", "-fsanitize-recover=kernel-address,alignment")
		} else {
			flags = append(flags, "-fsanitize-recover=kernel-address")
		}
	case instrumented(c):
		// GCC instruments for ThreadSanitizer after it vectorizes: a vectorized thread
		// loop's access would be one access of many threads' elements, by whichever
		// thread the thread-local index names then. Each thread's accesses stay its own.
		flags = append(flags, "-fsanitize=thread", "--param", "tsan-instrument-func-entry-exit=0",
			"-fno-tree-vectorize", "-fno-tree-slp-vectorize")
	}
	return flags
}

// instrumentedFor is what a module checked under checks is instrumented for: checks,
// but racecheck only where the code can touch shared memory, the only memory it judges.
// A source that names no __shared__ (nor HIP's dynamic shared macro) in itself or its
// headers, and reads no headers the jit cannot see (-I), has nothing for it to watch:
// its memcheck and initcheck then take the inline shadow instead of a call per access,
// and racecheck alone leaves the code uninstrumented. Implicit warp-synchronous code,
// which racecheck lets run, is shared memory's too (warpsync.go).
func instrumentedFor(checks hipsys.Checks, source string, headers []header, user []string) hipsys.Checks {
	if checks&hipsys.CheckRace == 0 {
		return checks
	}
	names := func(s string) bool {
		return strings.Contains(s, "__shared__") || strings.Contains(s, "HIP_DYNAMIC_SHARED") || strings.Contains(s, "cubehip_dyn_shared")
	}
	if names(source) {
		return checks
	}
	for _, h := range headers {
		if names(h.source) {
			return checks
		}
	}
	for _, f := range user {
		if strings.HasPrefix(f, "-I") {
			return checks
		}
	}
	return checks &^ hipsys.CheckRace
}

// inlineShadow reports whether a module instrumented for c judges memory through the
// inline shadow (shadow.go): memcheck or initcheck without racecheck (synccheck watches
// barriers only), in a process that reserved the shadow. racecheck needs every access
// seen, which only a call per access gives; a process without the shadow checks memory
// that way too. The choice is part of the cache key (codeKey).
func inlineShadow(c hipsys.Checks) bool {
	return c&(hipsys.CheckMemory|hipsys.CheckInit) != 0 && c&hipsys.CheckRace == 0 && shadowReady()
}

// instrumented reports whether checks c need every access instrumented (all but
// synccheck, which watches barriers only). Such a module is compiled to an object and then
// linked without the sanitizer's runtime (-fsanitize at link time would make the module
// need libtsan or libasan, which cannot be loaded into a running process): the prelude's
// callbacks are the runtime.
func instrumented(c hipsys.Checks) bool {
	return c&(hipsys.CheckMemory|hipsys.CheckInit|hipsys.CheckRace) != 0
}

// CheckRegion is one allocation of device memory as a checked launch sees it: the buffer
// [Base, Base+Size) inside the reservation [Lo, Hi) (its redzones), and whether it was
// released (any access to it is then reported).
type CheckRegion struct {
	Lo, Base, Size, Hi uint64
	Freed              bool
	// Init is initcheck's shadow of the buffer, C memory of Size bytes, nonzero where
	// written (0: none kept, nothing judged): the launch's stores mark it.
	Init uintptr
}

// Checked reports whether the function's module was compiled with checks.
func (f *Function) Checked() bool { return f != nil && f.m != nil && f.m.checks != 0 }

// report kinds, as cubehip_check.h numbers them.
const (
	reportOOB        = 1
	reportFreed      = 2
	reportMisaligned = 3
	reportUninit     = 4
	reportDivergent  = 5
	reportExited     = 6
	reportSharedOOB  = 7
	reportRaceRAW    = 8
	reportRaceWAR    = 9
	reportRaceWAW    = 10
	reportSharedInit = 11
	reportLocalOOB   = 12
)

// LaunchChecked is Launch (LaunchCooperative with coop) of a checked module's kernel,
// its accesses judged against regions (the device's allocations, in any order; they must
// not overlap). What the checks saw makes the launch fail, with the reports as the
// error's Cause.
func (f *Function) LaunchChecked(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32, coop bool, regions []CheckRegion) error {
	if f == nil || f.m == nil {
		return errUnloaded
	}
	m := f.m
	set := m.sym("cubehip_check_set")
	if set == nil {
		return hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidImage, "kernel "+f.name+": a checked module without its checker")
	}
	sort.Slice(regions, func(i, j int) bool { return regions[i].Lo < regions[j].Lo })
	// Which region each pointer parameter points into, for the reports' names.
	ptrs := f.pointerArgs(params, offsets)
	n := len(regions)
	ctx := (*C.cubehip_go_check_ctx)(C.calloc(1, C.size_t(unsafe.Sizeof(C.cubehip_go_check_ctx{}))))
	regs := (*C.cubehip_go_check_region)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(C.cubehip_go_check_region{}))))
	reps := (*C.cubehip_go_check_report)(C.calloc(MaxCheckReports, C.size_t(unsafe.Sizeof(C.cubehip_go_check_report{}))))
	defer func() {
		C.free(unsafe.Pointer(ctx))
		C.free(unsafe.Pointer(regs))
		C.free(unsafe.Pointer(reps))
	}()
	rs := unsafe.Slice(regs, max(n, 1))
	lo, hi := ^uint64(0), uint64(0)
	owner := make([]int, n)
	for i, r := range regions {
		param := int32(-1)
		for p, v := range ptrs {
			if v >= r.Base && v < r.Base+max(r.Size, 1) {
				param = int32(p)
				break
			}
		}
		freed := C.uint32_t(0)
		if r.Freed {
			freed = 1
		}
		owner[i] = int(param)
		rs[i] = C.cubehip_go_check_region{lo: C.uint64_t(r.Lo), base: C.uint64_t(r.Base), size: C.uint64_t(r.Size), hi: C.uint64_t(r.Hi),
			param: C.int32_t(param), freed: freed, init: (*C.uchar)(cPointer(r.Init))}
		lo, hi = min(lo, r.Lo), max(hi, r.Hi)
	}
	if n == 0 {
		lo, hi = 0, 0
	}
	ctx.regions, ctx.n, ctx.checks = regs, C.uint32_t(n), C.uint32_t(m.checks)
	ctx.lo, ctx.hi = C.uint64_t(lo), C.uint64_t(hi)
	ctx.reports, ctx.cap = reps, MaxCheckReports
	ctx.serial = C.uint64_t(launchSerial.Add(1))
	// SAFETY: runner.c's globals live as long as the process.
	ctx.arena_min, ctx.arena_max = &C.cubehip_arena_min, &C.cubehip_arena_max

	m.checkMu.Lock()
	// SAFETY: ctx and what it points to are C memory that outlives the launch; the module
	// keeps the pointer only until the second call clears it.
	C.cubehip_call_check_set(set, ctx)
	err := f.launch(grid, block, sharedMem, params, offsets, coop)
	C.cubehip_call_check_set(set, nil)
	m.checkMu.Unlock()

	total := int(ctx.count)
	if total == 0 {
		return err
	}
	out := &hipsys.CheckReports{Total: total}
	names := f.paramNames()
	for _, r := range unsafe.Slice(reps, min(total, MaxCheckReports)) {
		rep := f.report(r, regions, owner, names)
		// A loop repeats its access: one report of each says it (Total counts them all).
		if !slices.Contains(out.Reports, rep) {
			out.Reports = append(out.Reports, rep)
		}
	}
	// A bad address is what a GPU reports as one; an uninitialized read or a barrier
	// faults nothing there, and is the launch's failure.
	status := hipsys.ErrorIllegalAddress
	if k := out.Reports[0].Check; k != "memcheck" {
		status = hipsys.ErrorLaunchFailure
	}
	detail := "kernel " + f.name + ": " + out.Error()
	call := callLaunch
	if coop {
		call = callLaunchCooperative
	}
	return &hipsys.Error{Platform: "cpu", Call: call, Status: status, Detail: detail, Cause: out}
}

// cPointer turns the address of C memory into a pointer (through memory, so that vet's
// uintptr check has nothing to guess about: the memory is not Go's).
func cPointer(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

// pointerArgs is each parameter's value where it is a pointer (0 elsewhere).
func (f *Function) pointerArgs(params []byte, offsets []uint32) []uint64 {
	out := make([]uint64, len(f.params))
	for i, p := range f.params {
		if p.Kind != hipsys.ParamPointer || i >= len(offsets) || int(offsets[i])+8 > len(params) {
			continue
		}
		out[i] = binary.LittleEndian.Uint64(params[offsets[i]:])
	}
	return out
}

// paramNames are the entry's parameter names as its source declares them (nil where the
// module did not record them: a kernel reached through a name expression).
func (f *Function) paramNames() []string {
	s := f.m.sym("cubehip_pnames_" + f.m.entries[f.name])
	if s == nil {
		return nil
	}
	return strings.Split(C.GoString((*C.char)(s)), ",")
}

func (f *Function) report(r C.cubehip_go_check_report, regions []CheckRegion, owner []int, names []string) hipsys.CheckReport {
	out := hipsys.CheckReport{
		Kernel:     f.name,
		Block:      hipsys.Dim3{X: uint32(r.block[0]), Y: uint32(r.block[1]), Z: uint32(r.block[2])},
		Thread:     hipsys.Dim3{X: uint32(r.thread[0]), Y: uint32(r.thread[1]), Z: uint32(r.thread[2])},
		Address:    uint64(r.addr),
		Size:       uint32(r.size),
		Write:      r.write != 0,
		ParamIndex: -1,
	}
	if r.kind != reportDivergent && r.kind != reportExited {
		out.File, out.Line = f.m.lineOf(uint64(r.pc))
	}
	switch r.kind {
	case reportOOB:
		out.Check, out.What = "memcheck", "out of bounds"
	case reportFreed:
		out.Check, out.What = "memcheck", "use after release"
	case reportMisaligned:
		out.Check, out.What = "memcheck", "misaligned"
	case reportUninit:
		out.Check, out.What = "initcheck", "uninitialized read: nothing wrote these bytes since the buffer was allocated"
	case reportDivergent:
		out.Check, out.What = "synccheck", "divergent barrier: threads of a block wait at different __syncthreads"
	case reportExited:
		out.Check, out.What = "synccheck", "barrier not reached by every thread of the block: a thread returned while others wait at it"
	case reportSharedOOB:
		out.Check, out.What = "memcheck", "shared memory out of bounds"
	case reportRaceRAW:
		out.Check, out.What = "racecheck", "shared memory race: read of what another thread wrote with no barrier between"
	case reportRaceWAR:
		out.Check, out.What = "racecheck", "shared memory race: write of what another thread read with no barrier between"
	case reportRaceWAW:
		out.Check, out.What = "racecheck", "shared memory race: write of what another thread wrote with no barrier between"
	case reportSharedInit:
		out.Check, out.What = "initcheck", "uninitialized shared read: no thread of the block wrote these bytes"
	case reportLocalOOB:
		out.Check, out.What = "memcheck", "local array out of bounds: past a variable of the thread's own"
	default:
		out.Check, out.What = "check", fmt.Sprintf("report kind %d", r.kind)
	}
	if r.name != nil {
		// A shared access: the variable and the offset into it (the dynamic buffer's
		// name is "", reported as the kernel's extern __shared__ array).
		out.Shared = C.GoString(r.name)
		if out.Shared == "" {
			out.Shared = "extern __shared__"
		}
		out.Offset = int64(r.name_off)
		if r.kind >= reportRaceRAW && r.kind <= reportRaceWAW {
			out.OtherThread = hipsys.Dim3{X: uint32(r.thread2[0]), Y: uint32(r.thread2[1]), Z: uint32(r.thread2[2])}
			_, out.OtherLine = f.m.lineOf(uint64(r.pc2))
		}
	}
	if r.kind == reportDivergent || r.kind == reportExited {
		// A barrier's report holds lines, not addresses (cubehip_check.h's check_line).
		out.Line, out.OtherLine = int(r.pc), int(r.pc2)
		out.File = f.m.sourceFile()
		out.OtherThread = hipsys.Dim3{X: uint32(r.thread2[0]), Y: uint32(r.thread2[1]), Z: uint32(r.thread2[2])}
	}
	if i := int(r.region); i >= 0 && i < len(regions) {
		reg := regions[i]
		out.Offset, out.BufferSize = int64(uint64(r.addr)-reg.Base), reg.Size
		if p := owner[i]; p >= 0 {
			out.ParamIndex = p
			if p < len(names) {
				out.Param = names[p]
			}
		}
	}
	return out
}

// lineOf is the source file and line of a return address in the module's code (0 when
// the object has no line for it).
func (m *Module) lineOf(pc uint64) (string, int) {
	if pc == 0 {
		return "", 0
	}
	m.linesOnce.Do(m.readLines)
	addr := pc - uint64(m.base) - 1 // a return address: the call is the byte before
	rows := m.lines
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > addr }) - 1
	if i < 0 || rows[i].file == "" {
		return "", 0
	}
	return rows[i].file, rows[i].line
}

// sourceFile is the kernel's source file as the line table names it: the first row's
// that is not the prelude's.
func (m *Module) sourceFile() string {
	m.linesOnce.Do(m.readLines)
	for _, r := range m.lines {
		if r.file != "" {
			return r.file
		}
	}
	return ""
}

type lineRow struct {
	addr uint64
	file string
	line int
}

// readLines reads the object's DWARF line table.
func (m *Module) readLines() {
	ef, err := elf.NewFile(bytes.NewReader(m.object))
	if err != nil {
		return
	}
	d, err := ef.DWARF()
	if err != nil {
		return
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.File == nil || le.Line == 0 {
				continue
			}
			// The prelude's rows stay, nameless: an address in its code is no line of the
			// user's, and must not borrow the row before it.
			name := filepath.Base(le.File.Name)
			if strings.HasPrefix(name, "cubehip_") || strings.HasPrefix(name, "<") {
				name = ""
			}
			m.lines = append(m.lines, lineRow{addr: le.Address, file: name, line: le.Line})
		}
	}
	sort.SliceStable(m.lines, func(i, j int) bool { return m.lines[i].addr < m.lines[j].addr })
}
