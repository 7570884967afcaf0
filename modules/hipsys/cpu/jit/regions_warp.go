package jit

import (
	"fmt"
	"strconv"
	"strings"
)

// Region formation, phase 2 (continued): warp shuffles.
//
// Invariants:
//   - Only the functions in shuffles are rewritten; any other warp function made
//     precheck fail the body before parsing.
//   - A shuffle splits its statement's region: its value argument, evaluated once, is
//     posted at the end of one region and read in the next, so every lane's post is in
//     before any lane reads; one statement holds at most one shuffle.
//   - Consecutive shuffles alternate between two exchange arrays, so the posts of one
//     never overwrite what the previous one's readers are still to read.
//   - Atomics on shared memory become plain updates only where plainAtomics names them:
//     in a region the block's threads run one after another on one OS thread.

// shuffles are the warp functions regions run (cubehip_regions.h); a kernel that calls
// any other warp function runs as fibers.
var shuffles = map[string]bool{
	"__shfl": true, "__shfl_up": true, "__shfl_down": true, "__shfl_xor": true,
	"__shfl_sync": true, "__shfl_up_sync": true, "__shfl_down_sync": true, "__shfl_xor_sync": true,
}

// shuffleRead is a statement's one shuffle call: its tokens [first, last], its value
// argument, and the call that reads the lanes' posts in its place.
type shuffleRead struct {
	first, last int
	value, read string
	xch         string // the exchange array it posts in
	direct      bool   // it reads a slot's array itself and posts nothing
}

// shuffleCall finds the statement's shuffle call, whose value argument must have no side
// effects (it is evaluated once, in the region before).
func (f *regionForm) shuffleCall(s *stmt) (shuffleRead, bool) {
	var c shuffleRead
	found := -1
	for k := s.first; k <= s.last; k++ {
		if shuffles[f.toks[k].text] {
			if found >= 0 {
				f.fail("two warp shuffles in one statement at line %d", f.line(k))
				return c, false
			}
			found = k
		}
	}
	name := f.toks[found].text
	if found+1 > s.last || f.toks[found+1].text != "(" {
		f.fail("%s not called at line %d", name, f.line(found))
		return c, false
	}
	c.first, c.last = found, skipParens(f.toks, found+1)-1
	var args [][2]int // token ranges [lo, hi)
	lo, depth := found+2, 0
	for k := found + 2; k <= c.last; k++ {
		switch t := f.toks[k].text; {
		case t == "(" || t == "[" || t == "{":
			depth++
		case (t == ")" || t == "]" || t == "}") && k < c.last:
			depth--
		case t == "," && depth == 0 || k == c.last:
			args = append(args, [2]int{lo, k})
			lo = k + 1
		}
	}
	if strings.HasSuffix(name, "_sync") {
		args = args[1:] // the mask: every lane of a region's warp takes part
		name = strings.TrimSuffix(name, "_sync")
	}
	if len(args) < 2 || len(args) > 3 || args[0][0] >= args[0][1] {
		f.fail("%s with %d arguments at line %d", name, len(args), f.line(found))
		return c, false
	}
	for k := args[0][0]; k < args[0][1]; k++ {
		t, next := f.toks[k], f.toks[k+1]
		call := t.kind == 'i' && next.text == "(" && !pureWords[t.text]
		assign := t.text == "=" && !strings.Contains("=<>!", f.toks[k-1].text) && next.text != "="
		step := (t.text == "+" || t.text == "-") && next.text == t.text && t.end == next.start
		if call || assign || step {
			f.fail("a shuffled value with effects at line %d", f.line(k))
			return c, false
		}
	}
	c.value = f.text(args[0][0], args[0][1]-1)
	width := "warpSize"
	if len(args) == 3 {
		width = f.text(args[2][0], args[2][1]-1)
	}
	kind := strings.TrimPrefix(name, "__shfl")
	// Shuffles alternate between two exchange arrays: the next shuffle's posts may share
	// a region with this one's reads, which must not see them. A shuffle down of a local
	// kept in a slot reads the slot itself, with no posting region: the region runs its
	// lanes in increasing order, and each writes only its own lane, so the higher lanes
	// a shuffle down reads still hold the values they had when it began.
	if v := f.lookup(c.value); kind == "_down" && v != nil && v.kind == varSlot {
		c.xch, c.direct = "__cubehip_s"+strconv.Itoa(v.slot), true
	} else {
		c.xch = "__cubehip_xch" + strconv.Itoa(f.nshfl%2)
		f.nshfl++
	}
	act := ""
	if f.pred >= 0 {
		act = ", __cubehip_s" + strconv.Itoa(f.pred) // the lanes that took the branch
	}
	c.read = fmt.Sprintf("::cubehip::region_shfl%s<std::decay_t<decltype(%s)>>(%s, __cubehip_t, __cubehip_n, %s, %s%s)",
		kind, c.value, c.xch, f.text(args[1][0], args[1][1]-1), width, act)
	return c, true
}

// plainAtomics have a plain version for shared memory in regions (cubehip_regions.h).
var plainAtomics = map[string]bool{
	"atomicAdd": true, "atomicSub": true, "atomicMax": true, "atomicMin": true, "atomicExch": true,
	"atomicAnd": true, "atomicOr": true, "atomicXor": true, "atomicCAS": true, "atomicInc": true, "atomicDec": true,
}
