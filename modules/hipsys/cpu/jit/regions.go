package jit

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Region formation: an entry body with __syncthreads is rewritten, in its source, into
// loops over the block's threads between barriers (prelude/cubehip_regions.h runs them),
// instead of one fiber per thread switched at every barrier. Source to source rather than
// on LLVM IR: the jit already scans entry bodies, g++ is the only compiler it can count on,
// and what is left after the rewrite is ordinary C++ that GCC vectorizes across threads.
//
// The structured subset transforms:
//   - `__syncthreads();` as a statement of the body, or of the body of a for, while, do or
//     if (or a nested { }) that holds barriers; such a statement runs once per block, so
//     its condition, a for's init and step must be block-uniform by construction: they
//     name only the block's indices and sizes, parameters the body never assigns, the
//     loop variables of enclosing such loops and locals recomputed from those;
//   - locals declared between barriers and used after the next one: recomputed in each
//     later region when they are never assigned and depend only on thread and block
//     indices, parameters and constants (tid, row, col); otherwise one slot per thread
//     (an array indexed by the thread's linear index) of the declared type;
//   - `return;` ends the thread: it skips the rest of its region and every later one;
//   - warp shuffles, each splitting its statement's region (shuffleCall), also inside an
//     if whose condition is the thread's when the if holds no barrier and no else, and
//     in such ifs inside one another (predicated): the body's regions run for the
//     threads whose conditions held.
//
// Anything else keeps the fibers, with the reason logged at debug level: a barrier in an
// expression, a switch or behind a thread-dependent condition, other warp functions, break or
// continue out of a region, goto, lambdas, a parameter the body assigns, a cross-barrier
// local declared with auto or several declarators, barriers in __device__ functions.
//
// The phases, each in a file of its own that opens with its invariants:
//   - regions.go: the entry point (formRegions), the rewrite's state, and precheck, which
//     refuses what no phase handles wherever it stands;
//   - regions_parse.go: the body parsed into statements;
//   - regions_emit.go, regions_warp.go, regions_block.go: each sequence rewritten into
//     regions, with warp shuffles, block-level statements and predicated ifs;
//   - regions_uniform.go: which expressions are block-uniform;
//   - regions_live.go: what lives across a barrier: recomputed locals and slots.
//
// Invariants of the whole: formRegions either returns edits that transform the entire
// body or a reason and no edits (the kernel then runs as fibers); the first reason found
// is kept (fail); the source is never changed in place, only described by edits that
// keep its lines.

// regionsEnabled is $CUBEHIP_CPU_REGIONS: "0" runs every barrier kernel as fibers (to
// compare the two, or to rule the transform out). It is part of the code key.
func regionsEnabled() bool { return strings.TrimSpace(os.Getenv("CUBEHIP_CPU_REGIONS")) != "0" }

// debugLog is where the jit says which kernels run as fibers and why: stderr at debug
// level when $CUBEHIP_LOG is debug (as the server's logger), else slog's default logger.
var debugLog = sync.OnceValue(func() *slog.Logger {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("CUBEHIP_LOG")), "debug") {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.Default()
})

// maxSlots matches CUBEHIP_MAX_SLOTS (cubehip_regions.h).
const maxSlots = 64

type stmtKind uint8

const (
	stSimple stmtKind = iota
	stCompound
	stIf
	stFor
	stWhile
	stDo
	stSwitch
	stBarrier
	stEmpty
)

// stmt is one statement of an entry body: its tokens [first, last], and for the
// structured ones the header's parentheses, bodies and items.
type stmt struct {
	kind        stmtKind
	first, last int
	open, close int // the header's ( and ) (if, for, while, switch, do's while)
	body, alt   *stmt
	items       []*stmt
	sync        bool // holds a barrier or a warp shuffle
	shfl        bool // holds a warp shuffle
}

// edit replaces src[start:end] with text; inserts (start == end) at one place apply in
// the order they were made.
type edit struct {
	start, end int
	text       string
}

// regionVar is a name of the body that later regions or block-level headers read: a
// local recomputed in each region (decl is its declaration, repeated), a local kept in a
// per-thread slot, or a name of the block's (a __shared__ or static variable, a local
// whose value is block-uniform, computed once per block).
type regionVar struct {
	name    string
	kind    varKind
	decl    string // varRemat: the declaration statement
	varying bool   // varRemat: recomputed from the thread's index
	store   bool   // varBlock: memory the threads may write (shared, static)
	shared  bool   // varBlock: a __shared__ array, named in regions through a reference
	tid     bool   // varRemat: the thread's x index itself (t = threadIdx.x)
	slot    int    // varSlot
}

type varKind uint8

const (
	varRemat varKind = iota
	varSlot
	varBlock
)

// regionForm rewrites one entry body.
type regionForm struct {
	src      string
	toks     []token
	lo, hi   int // the body's tokens, braces excluded
	params   map[string]bool
	locals   map[string]bool // every name the body declares
	macros   map[string]bool // the source's macros that name nothing thread-dependent
	edits    []edit
	slots    []string // each slot's element type
	scopes   [][]*regionVar
	loops    [][]string // the block-uniform loop variables in scope
	shuffles bool       // the body calls warp shuffles
	nshfl    int        // shuffles so far
	live     bool       // the body returns: threads carry a live flag
	pred     int        // the slot of the thread-dependent if the regions are in (predicated), -1 outside
	// keepAtomics leaves atomics on shared memory atomic (a checked module's, under
	// racecheck), where they otherwise become plain updates.
	keepAtomics bool
	why         string // why the body cannot be transformed ("" while it can)
}

// formRegions returns the edits that turn the body (tokens between open and close, the
// braces' indices) into regions, or why it cannot.
func formRegions(src string, toks []token, open, close int, params []string, macros map[string]bool, keepAtomics bool) ([]edit, string) {
	f := &regionForm{src: src, toks: toks, lo: open + 1, hi: close, params: map[string]bool{}, locals: map[string]bool{}, macros: macros, pred: -1,
		keepAtomics: keepAtomics}
	for _, p := range params {
		f.params[p] = true
	}
	if why := f.precheck(); why != "" {
		return nil, why
	}
	items, ok := f.parseSeq(f.lo, f.hi)
	if !ok {
		return nil, f.why
	}
	f.declared(items)
	f.seq(items, close, toks[close].start)
	if f.why != "" {
		return nil, f.why
	}
	if len(f.slots)+3 > maxSlots {
		return nil, "more than " + strconv.Itoa(maxSlots) + " locals live across barriers"
	}
	var b strings.Builder
	b.WriteString("{ CUBEHIP_REGIONS_BEGIN ")
	for i, t := range f.slots {
		if t == predSlot {
			// A lane's flag is read up to 64 lanes either side of it (a shuffle up or
			// down from it), as an exchange array's values are.
			fmt.Fprintf(&b, "unsigned char* const __cubehip_s%d = static_cast<unsigned char*>(::cubehip::exchange(%d, __cubehip_n)); ", i, i)
			continue
		}
		fmt.Fprintf(&b, "auto* const __cubehip_s%d = ::cubehip::slot<%s>(%d, __cubehip_n); ", i, t, i)
	}
	extra := len(f.slots)
	if f.live {
		fmt.Fprintf(&b, "unsigned char* const __cubehip_live = ::cubehip::slot<unsigned char>(%d, __cubehip_n); ", extra)
		extra++
	}
	if f.shuffles {
		fmt.Fprintf(&b, "void* const __cubehip_xch0 = ::cubehip::exchange(%d, __cubehip_n); ", extra)
		fmt.Fprintf(&b, "void* const __cubehip_xch1 = ::cubehip::exchange(%d, __cubehip_n); ", extra+1)
	}
	// The slots are the same for every block of the range: they are taken once, and the
	// closure run per block (CUBEHIP_REGIONS_BODY) captures their addresses.
	b.WriteString("CUBEHIP_REGIONS_BODY ")
	if f.live {
		b.WriteString("__builtin_memset(__cubehip_live, 1, __cubehip_n); ")
	}
	f.edits = append(f.edits, edit{toks[open].start, toks[open].end, b.String()}, edit{toks[close].start, toks[close].end, " CUBEHIP_REGIONS_END }"})
	return f.edits, ""
}

func (f *regionForm) fail(format string, args ...any) {
	if f.why == "" {
		f.why = fmt.Sprintf(format, args...)
	}
}

func (f *regionForm) line(i int) int { return strings.Count(f.src[:f.toks[i].start], "\n") + 1 }

// precheck rules out what the rewrite never handles, wherever it is in the body.
func (f *regionForm) precheck() string {
	for i := f.lo; i < f.hi; i++ {
		t := f.toks[i].text
		switch {
		case t == "goto":
			return "goto at line " + strconv.Itoa(f.line(i))
		case t == "return":
			if f.toks[i+1].text != ";" {
				return "return with a value at line " + strconv.Itoa(f.line(i))
			}
			f.live = true
		case strings.HasPrefix(t, "__syncthreads_"):
			return t + " at line " + strconv.Itoa(f.line(i))
		case shuffles[t]:
			f.shuffles = true
		case warpNames[t]:
			return "warp function " + t + " at line " + strconv.Itoa(f.line(i))
		case t == "]" && i+1 < f.hi && (f.toks[i+1].text == "(" || f.toks[i+1].text == "{" || f.toks[i+1].text == "mutable") && f.lambdaAt(i):
			return "a lambda at line " + strconv.Itoa(f.line(i))
		case t == "asm" || t == "__asm__" || t == "try" || t == "co_await" || t == "co_yield":
			return t + " at line " + strconv.Itoa(f.line(i))
		}
		if f.params[t] && f.toks[i].kind == 'i' && f.modified(i, true) {
			return "assigns its parameter " + t + " at line " + strconv.Itoa(f.line(i))
		}
	}
	if f.shuffles && f.live {
		// A returned lane takes no part in a shuffle: regions would read what it posted.
		return "return in a kernel with warp shuffles"
	}
	return ""
}

// lambdaAt reports whether the ] at i closes a lambda's capture list: its [ follows
// something that cannot be subscripted.
func (f *regionForm) lambdaAt(i int) bool {
	depth := 0
	for j := i; j >= f.lo; j-- {
		switch f.toks[j].text {
		case "]":
			depth++
		case "[":
			depth--
			if depth == 0 {
				if j == f.lo {
					return true
				}
				p := f.toks[j-1]
				return !(p.kind == 'i' && !keywords[p.text] || p.text == ")" || p.text == "]")
			}
		}
	}
	return false
}
