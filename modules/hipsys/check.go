package hipsys

import (
	"fmt"
	"strings"
)

// Checks is a set of the kernel checks a platform can run kernels under (KernelChecking):
// the cpu platform's checker, which compiles kernels with each access instrumented and
// reports a bad one in the user's terms instead of letting it pass or corrupt memory.
type Checks uint8

const (
	// CheckMemory (memcheck): every global access inside a live allocation, the whole
	// access, naturally aligned; none through a released one.
	CheckMemory Checks = 1 << iota
	// CheckInit (initcheck): no read of global memory nothing wrote since it was allocated.
	CheckInit
	// CheckSync (synccheck): every thread of a block that is still running reaches the
	// same __syncthreads as the others.
	CheckSync
	// CheckRace (racecheck): no two threads of a block access one byte of shared memory,
	// one of them writing, with no barrier between them.
	CheckRace
)

// checkNames are the checks' names, as CUBEHIP_CHECK and the command line spell them.
var checkNames = []struct {
	c    Checks
	name string
}{{CheckMemory, "memcheck"}, {CheckInit, "initcheck"}, {CheckSync, "synccheck"}, {CheckRace, "racecheck"}}

// ParseChecks reads a comma list of check names ("memcheck,initcheck"; "all" is every
// one, "" and "none" none). An unknown name is an error naming it and the known ones.
func ParseChecks(s string) (Checks, error) {
	var c Checks
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case "", "none":
			continue
		case "all":
			for _, n := range checkNames {
				c |= n.c
			}
			continue
		}
		found := false
		for _, n := range checkNames {
			if n.name == f {
				c, found = c|n.c, true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown kernel check %q: the checks are %s (or all)", f, Checks(0xff).String())
		}
	}
	return c, nil
}

// String is the comma list ParseChecks reads back ("" for none).
func (c Checks) String() string {
	var names []string
	for _, n := range checkNames {
		if c&n.c != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// CheckOptionPrefix starts the compile option that asks a platform that checks kernels
// (KernelChecking) for a checked module: CheckOption(c).
const CheckOptionPrefix = "--cubehip-check="

// CheckOption is the compile option that makes a module checked under c ("" for none). A
// platform that cannot check kernels does not know it: ask KernelChecking first.
func CheckOption(c Checks) string {
	if c == 0 {
		return ""
	}
	return CheckOptionPrefix + c.String()
}

// KernelChecking is a Platform whose kernels can run checked. Only the cpu platform is
// one: a GPU's kernels run on hardware cubehip cannot watch.
//
// Checks are asked for per module and per caller, since a platform is shared by every
// Device of the process: a module compiled with CheckOption(c) among its options is
// checked, and CheckKernels turns on what the platform keeps for it (the memory the
// checked kernels' accesses are judged against) until release is called. Memory
// allocated while no checks are on is judged with less (no redzones, no record of what
// was written).
type KernelChecking interface {
	CheckKernels(c Checks) (release func(), err error)
}

// CheckReport is one bad access or barrier the checker saw, in the kernel's terms.
type CheckReport struct {
	Check  string // "memcheck", "initcheck", "synccheck", "racecheck"
	What   string // "out of bounds", "use after release", "misaligned", "uninitialized read", "divergent barrier", ...
	Kernel string
	Block  Dim3
	Thread Dim3
	// The access: its address, size in bytes and direction. Param is the name of the
	// kernel parameter whose buffer the address lies in or beside ("" where none does, or
	// the name is unknown: ParamIndex then says which, -1 for none), Offset the access's
	// byte offset from that buffer's start (negative before it), BufferSize its size.
	Address    uint64
	Size       uint32
	Write      bool
	Param      string
	ParamIndex int
	Offset     int64
	BufferSize uint64
	// Shared is the __shared__ variable a shared-memory access is in ("extern __shared__"
	// for the dynamic buffer; "" for a global access): Offset is then from its start.
	Shared string
	// File and Line are the kernel source line of the access or barrier (0 if unknown).
	File string
	Line int
	// Other is the second thread and line of a two-thread report (a divergent barrier:
	// a thread that took another path), zero otherwise.
	OtherThread Dim3
	OtherLine   int
}

// String is the report as one line, compute-sanitizer's order: what, where, who.
func (r CheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", r.Check, r.What)
	if r.Size > 0 {
		dir := "read"
		if r.Write {
			dir = "write"
		}
		fmt.Fprintf(&b, ": %s of %d bytes at %#x", dir, r.Size, r.Address)
		switch {
		case r.Shared != "":
			fmt.Fprintf(&b, ", byte %d of __shared__ %s", r.Offset, r.Shared)
		case r.Param != "":
			fmt.Fprintf(&b, ", byte %d of parameter %s (%d bytes)", r.Offset, r.Param, r.BufferSize)
		case r.ParamIndex >= 0:
			fmt.Fprintf(&b, ", byte %d of parameter %d's buffer (%d bytes)", r.Offset, r.ParamIndex, r.BufferSize)
		case r.BufferSize > 0:
			fmt.Fprintf(&b, ", byte %d of a %d-byte buffer no parameter names", r.Offset, r.BufferSize)
		}
	}
	fmt.Fprintf(&b, ", in kernel %s, block (%d,%d,%d) thread (%d,%d,%d)", r.Kernel, r.Block.X, r.Block.Y, r.Block.Z, r.Thread.X, r.Thread.Y, r.Thread.Z)
	if r.Line > 0 {
		fmt.Fprintf(&b, ", at %s:%d", r.File, r.Line)
	}
	if r.OtherLine > 0 || r.OtherThread != (Dim3{}) {
		fmt.Fprintf(&b, "; thread (%d,%d,%d)", r.OtherThread.X, r.OtherThread.Y, r.OtherThread.Z)
		if r.OtherLine > 0 {
			fmt.Fprintf(&b, " at line %d", r.OtherLine)
		}
	}
	return b.String()
}

// CheckReports is what a checked launch saw: the first reports (at most a cap, so that a
// bug in a hot loop stays readable) and how many there were in all. It is the Cause of
// the launch's *Error, so errors.As finds it through every layer that wraps it.
type CheckReports struct {
	Reports []CheckReport
	Total   int
}

func (r *CheckReports) Error() string {
	if len(r.Reports) == 0 {
		return "no check reports"
	}
	msg := r.Reports[0].String()
	if r.Total > 1 {
		msg += fmt.Sprintf(" (and %d more)", r.Total-1)
	}
	return msg
}
