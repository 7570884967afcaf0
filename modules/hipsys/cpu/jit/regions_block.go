package jit

import (
	"strconv"
	"strings"
)

// Region formation, phase 2 (continued): statements that run once per block, and ifs
// predicated per thread.
//
// Invariants:
//   - A statement holding a barrier runs once per block: its condition, a for's init and
//     step are checked block-uniform (uniform) before its bodies are rewritten as
//     sequences of their own, and a break or continue may not leave a region (escapes).
//   - A barrier in a switch or in an expression fails the body.
//   - An if whose condition is the thread's runs as predicated regions only when it holds
//     shuffles, no barrier and no else (predicable); each thread's flag lives in a slot
//     of its own (predSlot) and, nested, is the outer flag and its own condition.

// escapes reports whether s holds a break or continue that leaves it (bound tells which
// are caught by a loop or switch around them inside s).
func (f *regionForm) escapes(s *stmt, breakBound, contBound bool) bool {
	switch s.kind {
	case stCompound:
		for _, it := range s.items {
			if f.escapes(it, breakBound, contBound) {
				return true
			}
		}
		return false
	case stIf:
		return f.escapes(s.body, breakBound, contBound) || s.alt != nil && f.escapes(s.alt, breakBound, contBound)
	case stFor, stWhile, stDo:
		return f.escapes(s.body, true, true)
	case stSwitch:
		return f.escapes(s.body, true, contBound)
	}
	for k := s.first; k <= s.last; k++ {
		switch f.toks[k].text {
		case "break":
			if !breakBound {
				return true
			}
		case "continue":
			if !contBound {
				return true
			}
		}
	}
	return false
}

// structure rewrites a statement holding a barrier, which runs once per block.
func (f *regionForm) structure(s *stmt) {
	switch s.kind {
	case stCompound:
		f.seq(s.items, s.last, f.toks[s.last].start)
	case stIf:
		if ok, varying, _ := f.exprKind(s.open+1, s.close, false); (!ok || varying) && f.predicable(s) {
			f.predicated(s)
			return
		}
		f.uniform(s.open+1, s.close, "if")
		f.blockDecls(s, s.open+1, s.close)
		f.branch(s.body)
		if s.alt != nil {
			f.branch(s.alt)
		}
	case stWhile, stDo:
		f.uniform(s.open+1, s.close, map[stmtKind]string{stWhile: "while", stDo: "do-while"}[s.kind])
		f.blockDecls(s, s.open+1, s.close)
		f.branch(s.body)
	case stFor:
		f.forLoop(s)
	default:
		f.fail("a barrier inside a %s at line %d", map[stmtKind]string{stSwitch: "switch", stSimple: "expression"}[s.kind], f.line(s.first))
	}
}

// predSlot is the element type of a predicate's slot (formRegions allocates it apart).
const predSlot = "pred"

// predicable reports whether an if whose condition is the thread's can run as predicated
// regions: it holds warp shuffles but no barrier (a barrier the threads that skip the if
// never reach is undefined in HIP, and the fibers remain for it), has no else (the
// fibers group lanes that diverge to different shuffles into one collective, which
// regions running one branch after the other would not), and its condition has no
// shuffle and no character literal. It may sit in another such if.
func (f *regionForm) predicable(s *stmt) bool {
	if !s.shfl || s.alt != nil {
		return false
	}
	for k := s.first; k <= s.last; k++ {
		if f.toks[k].text == "__syncthreads" || k <= s.close && shuffles[f.toks[k].text] {
			return false
		}
	}
	return !strings.ContainsRune(f.src[f.toks[s.open].start:f.toks[s.close].end], '\'')
}

// predicated rewrites `if (cond) body`, cond the thread's and body holding warp shuffles
// (a warp-level step only some warps take, `if (warp == 0) v = warp_sum(v)`): a region
// stores each thread's cond in a slot; the body runs at block level as regions each
// thread enters only when its flag is set, and a shuffle there reads only lanes whose
// flag is set, leaving the caller's value for the others, as the fibers' collectives of
// the lanes that reach them do. Inside another such if, a thread's flag is the outer
// one's and its cond, cond evaluated only where the outer held (it may rely on it); the
// region that writes it runs for every thread, so that a lane outside the outer if reads
// as one that did not take this one, not as whatever its slot held before.
func (f *regionForm) predicated(s *stmt) {
	outer := f.pred
	n := len(f.slots)
	f.slots = append(f.slots, predSlot)
	f.pred = -1
	head := f.openText() + "__cubehip_s" + strconv.Itoa(n) + "[__cubehip_t] = "
	if outer >= 0 {
		head += "__cubehip_s" + strconv.Itoa(outer) + "[__cubehip_t] && "
	}
	f.replace(s.first, s.first, head)
	f.insert(f.toks[s.close].end, " ? 1 : 0; "+f.closeText())
	f.pred = n
	f.branch(s.body)
	f.pred = outer
}

// branch rewrites the body of a block-level if or loop as a sequence of its own.
func (f *regionForm) branch(s *stmt) {
	switch s.kind {
	case stCompound:
		f.seq(s.items, s.last, f.toks[s.last].start)
	case stBarrier:
		// Still a statement: the body of the if or loop around it.
		f.replace(s.first, s.last, f.barrierText())
	default:
		f.insert(f.toks[s.first].start, "{ ")
		end := f.toks[s.last].end
		f.seq([]*stmt{s}, s.last+1, end)
		f.insert(end, " }")
	}
}

// forLoop: `for (init; cond; step)` with a barrier in its body runs once per block; init
// declares or assigns the loop's variables from block-uniform values.
func (f *regionForm) forLoop(s *stmt) {
	semi := []int{}
	depth := 0
	for k := s.open + 1; k < s.close; k++ {
		switch f.toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ";":
			if depth == 0 {
				semi = append(semi, k)
			}
		case ":":
			if depth == 0 && f.toks[k-1].text != ":" && f.toks[k+1].text != ":" {
				f.fail("a range for with a barrier at line %d", f.line(s.first))
				return
			}
		}
	}
	if len(semi) != 2 {
		f.fail("a for header without two ; at line %d", f.line(s.first))
		return
	}
	var vars []string
	if s.open+1 < semi[0] {
		if d, ok := f.declaration(s.open+1, semi[0]); ok {
			for _, dc := range d.decls {
				vars = append(vars, f.toks[dc.name].text)
				if dc.init < 0 {
					f.fail("for variable %s without a value at line %d", f.toks[dc.name].text, f.line(s.first))
					return
				}
				f.uniform(dc.init, dc.end, "for")
			}
		} else {
			f.uniform(s.open+1, semi[0], "for")
		}
	}
	f.loops = append(f.loops, vars)
	defer func() { f.loops = f.loops[:len(f.loops)-1] }()
	f.uniform(semi[0]+1, semi[1], "for")
	f.uniform(semi[1]+1, s.close, "for")
	f.blockDecls(s, s.open+1, s.close)
	if s.shfl {
		// A warp reduction's loop (`for (o = warpSize / 2; o > 0; o /= 2)`) has a
		// constant trip count: unrolled, each shuffle's distance is a constant, and
		// GCC's vector loop for it needs no check of the distance against its width.
		// Measured on the 2-core dev VM, one core, the warp-shuffle reduction of 1M
		// floats: 1.12× the C loop unrolled, 0.84× not (median of 9 runs each).
		f.insert(f.toks[s.first].start, `_Pragma("GCC unroll 8") `)
	}
	f.branch(s.body)
}

// blockDecls puts the declarations of the recomputed locals a block-level header reads in
// front of it, in a block of their own around the statement.
func (f *regionForm) blockDecls(s *stmt, lo, hi int) {
	var decls []string
	seen := map[string]bool{}
	for k := lo; k < hi; k++ {
		if v := f.lookup(f.toks[k].text); v != nil && v.kind == varRemat && !seen[v.decl] && f.plain(k) {
			seen[v.decl] = true
		}
	}
	if len(seen) == 0 {
		return
	}
	// In declaration order, with what they depend on.
	for _, sc := range f.scopes {
		for _, v := range sc {
			if v.kind == varRemat && !v.varying && !containsStr(decls, v.decl) {
				decls = append(decls, v.decl)
			}
		}
	}
	f.insert(f.toks[s.first].start, "{ [[maybe_unused]] "+strings.Join(decls, " [[maybe_unused]] ")+" ")
	f.insert(f.toks[s.last].end, " }")
}
