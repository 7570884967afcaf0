package jit

import (
	"fmt"
	"strings"
)

// Region formation, phase 2: rewriting each sequence into regions.
//
// Invariants:
//   - seq rewrites every sequence that runs once per block (the body, and the bodies of
//     block-level statements); inside it a region opens at the first ordinary statement
//     and closes at the next barrier, shuffle or block-level statement, or at the end of
//     the sequence, so every region that opens closes in the sequence that opened it.
//   - Edits replace or insert at whole tokens and keep the replaced text's newlines, so
//     the compiler's line numbers are the user's.
//   - f.scopes holds one frame per sequence being rewritten (pushed and popped by seq):
//     a name registered for later regions (addVar) is visible exactly where C++ scoping
//     would make it visible, and a region's opening text declares only what is in scope.
//   - A statement runs at block level only when it holds a barrier or blockLevel finds it
//     the block's (a __shared__ or static declaration, a typedef, using or constexpr
//     later regions need, a block-uniform local never assigned); everything else runs in
//     a region, once per thread.

func (f *regionForm) insert(at int, text string) { f.edits = append(f.edits, edit{at, at, text}) }

// replace replaces the tokens [first, last] with text, keeping their newlines.
func (f *regionForm) replace(first, last int, text string) {
	a, b := f.toks[first].start, f.toks[last].end
	f.edits = append(f.edits, edit{a, b, text + strings.Repeat("\n", strings.Count(f.src[a:b], "\n"))})
}

// seq rewrites a sequence of statements that runs once per block: runs of ordinary
// statements become regions; barriers end them; statements holding barriers run at block
// level. closeTok is the index of the token that ends the sequence and closeAt where its
// last region closes.
func (f *regionForm) seq(items []*stmt, closeTok, closeAt int) {
	f.scopes = append(f.scopes, nil)
	defer func() { f.scopes = f.scopes[:len(f.scopes)-1] }()
	start := -1    // the open region's first item
	openEdit := -1 // the edit that opens it
	open := func(k, at int) {
		start, openEdit = k, len(f.edits)
		f.insert(at, f.openText())
	}
	closeRegion := func(upTo int) {
		if upTo == start+1 && openEdit >= 0 {
			f.narrow(items[start], &f.edits[openEdit])
		}
		f.endRegion(items[start:upTo], closeTok)
		start, openEdit = -1, -1
	}
	for k, s := range items {
		if f.why != "" {
			return
		}
		switch {
		case s.kind == stBarrier:
			if start >= 0 {
				f.replace(s.first, s.last, f.closeText()+f.barrierText())
				closeRegion(k)
			} else {
				f.replace(s.first, s.last, f.barrierText())
			}
		case s.kind == stSimple && s.shfl:
			// A shuffle reads what every lane of the warp posted: the statement's value
			// argument is posted at the end of one region, and the statement runs in the
			// next, reading its lanes' posts.
			c, ok := f.shuffleCall(s)
			if !ok {
				return
			}
			at := f.toks[s.first].start
			switch {
			case !c.direct:
				if start < 0 {
					open(k, at)
				}
				f.insert(at, "::cubehip::region_post("+c.xch+", __cubehip_t, "+c.value+");"+f.closeText())
				closeRegion(k)
			case start >= 0:
				f.insert(at, f.closeText())
				closeRegion(k)
			}
			open(k, at)
			f.regionStmt(s)
			f.replace(c.first, c.last, c.read)
		case s.sync || f.blockLevel(s):
			if start >= 0 {
				f.insert(f.toks[s.first].start, f.closeText())
				closeRegion(k)
			}
			if s.sync {
				f.structure(s)
			}
		case s.kind == stEmpty:
		default:
			if start < 0 {
				open(k, f.toks[s.first].start)
			}
			f.regionStmt(s)
		}
	}
	if start >= 0 {
		f.insert(closeAt, f.closeText())
		closeRegion(len(items))
	}
}

// narrow starts a region that is one `if (t == k)` or `if (t % k == 0)` (t the thread's
// x index, k block-uniform) at thread k, or at 0 every k threads (open is the edit that
// opens it): a block's final step by thread 0, or by each warp's first lane, would
// otherwise run a loop over every thread that GCC can neither split nor vectorize. The
// if stays, so blocks of more than one dimension, which run every thread, are right too.
func (f *regionForm) narrow(s *stmt, open *edit) {
	if s.kind != stIf || s.alt != nil {
		return
	}
	lo, hi := s.open+1, s.close
	eq := -1
	for k := lo; k+1 < hi; k++ {
		if f.toks[k].text == "=" && f.toks[k+1].text == "=" && f.toks[k].end == f.toks[k+1].start {
			if eq >= 0 {
				return
			}
			eq = k
		}
	}
	if eq < 0 {
		return
	}
	uniform := func(a, b int) bool {
		if a >= b {
			return false
		}
		for k := a; k < b; k++ {
			if v := f.lookup(f.toks[k].text); v != nil && v.kind == varRemat && f.plain(k) {
				return false // declared in regions only
			}
		}
		ok, varying, _ := f.exprKind(a, b, false)
		return ok && !varying
	}
	first, step := "", ""
	switch {
	case f.threadX(lo, eq) && uniform(eq+2, hi):
		first, step = f.text(eq+2, hi-1), "0"
	case f.threadX(eq+2, hi) && uniform(lo, eq):
		first, step = f.text(lo, eq-1), "0"
	case eq+3 == hi && f.toks[eq+2].text == "0":
		for k := lo; k < eq; k++ {
			if f.toks[k].text == "%" && f.threadX(lo, k) && uniform(k+1, eq) {
				first, step = "0", f.text(k+1, eq-1)
			}
		}
	}
	if first == "" {
		return
	}
	open.text = strings.Replace(open.text, "CUBEHIP_REGION_BEGIN ", "CUBEHIP_REGION_FROM(("+first+"), ("+step+")) ", 1)
}

// threadX reports whether tokens [lo, hi) are the thread's x index: threadIdx.x,
// hipThreadIdx_x, or a local recomputed as one of them.
func (f *regionForm) threadX(lo, hi int) bool {
	switch hi - lo {
	case 1:
		if f.toks[lo].text == "hipThreadIdx_x" {
			return true
		}
		v := f.lookup(f.toks[lo].text)
		return v != nil && v.kind == varRemat && v.tid
	case 3:
		return f.toks[lo].text == "threadIdx" && f.toks[lo+1].text == "." && f.toks[lo+2].text == "x"
	}
	return false
}

// blockLevel reports whether a statement without barriers runs once per block rather
// than in a region, and registers what it declares: declarations whose storage is the
// block's (__shared__, static), names later regions need in scope (typedef, using,
// constexpr), and locals whose value is block-uniform and never assigned.
func (f *regionForm) blockLevel(s *stmt) bool {
	if s.kind != stSimple {
		return false
	}
	first := f.toks[s.first].text
	switch first {
	case "typedef", "using", "static_assert", "enum", "struct", "class", "union":
		return true
	case "HIP_DYNAMIC_SHARED":
		if s.last >= s.first+2 {
			f.addVar(&regionVar{name: f.toks[s.last-2].text, kind: varBlock, store: true})
		}
		return true
	}
	d, ok := f.declaration(s.first, s.last)
	if !ok {
		return false
	}
	shared, static, constant := false, false, false
	for k := d.typeLo; k < d.typeHi; k++ {
		switch f.toks[k].text {
		case "__shared__", "extern":
			shared = true
		case "static":
			static = true
		case "constexpr", "const":
			constant = true
		}
	}
	if shared || static {
		for _, dc := range d.decls {
			v := &regionVar{name: f.toks[dc.name].text, kind: varBlock, store: !constant}
			// A __shared__ array is a thread_local of the module: each access from a
			// region would look its address up again (a __tls_get_addr call, which GCC
			// does not hoist out of loops). Regions name a reference taken once per
			// block instead, through a pointer GCC cannot see is the thread-local's.
			if shared && dc.array && f.toks[d.typeLo].text != "extern" {
				v.shared = true
				f.insert(f.toks[s.last].end, " auto& __cubehip_sh_"+v.name+" = *::cubehip::opaque(&"+v.name+");")
			}
			f.addVar(v)
		}
		return true
	}
	if d.ref || f.pred >= 0 {
		// Inside a thread-dependent if, a local is the threads' that took it: evaluated
		// for the whole block, `if (t < k) { int q = n / k; ... }` could divide by zero.
		return false
	}
	for _, dc := range d.decls {
		if dc.init < 0 || dc.array {
			return false
		}
		if ok, varying, _ := f.exprKind(dc.init, dc.end, false); !ok || varying || f.assigned(f.toks[dc.name].text, dc.name, d.pointer) {
			return false
		}
	}
	for _, dc := range d.decls {
		f.addVar(&regionVar{name: f.toks[dc.name].text, kind: varBlock})
	}
	return true
}

func (f *regionForm) addVar(v *regionVar) {
	sc := &f.scopes[len(f.scopes)-1]
	*sc = append(*sc, v)
}

// assigned reports whether the body assigns name anywhere but in its declaration (the
// token decl); stores through a pointer (p[i] = x) do not assign it.
func (f *regionForm) assigned(name string, decl int, pointer bool) bool {
	for k := f.lo; k < f.hi; k++ {
		if k != decl && f.toks[k].text == name && f.plain(k) && f.modified(k, pointer) {
			return true
		}
	}
	return false
}

// openText starts a region: the thread loop, then every cross-barrier local in scope.
func (f *regionForm) openText() string {
	var b strings.Builder
	b.WriteString("CUBEHIP_REGION_BEGIN ")
	if f.live {
		b.WriteString("if (!__cubehip_live[__cubehip_t]) return; ")
	}
	if f.pred >= 0 {
		fmt.Fprintf(&b, "if (!__cubehip_s%d[__cubehip_t]) return; ", f.pred)
	}
	seen := map[string]bool{}
	for _, sc := range f.scopes {
		for _, v := range sc {
			if v.kind == varSlot {
				fmt.Fprintf(&b, "[[maybe_unused]] auto& %s = __cubehip_s%d[__cubehip_t]; ", v.name, v.slot)
			} else if v.shared {
				fmt.Fprintf(&b, "[[maybe_unused]] auto& %s = __cubehip_sh_%s; ", v.name, v.name)
			} else if v.kind == varRemat && !seen[v.decl] {
				seen[v.decl] = true
				b.WriteString("[[maybe_unused]] " + v.decl + " ")
			}
		}
	}
	b.WriteString("{ ")
	return b.String()
}

func (f *regionForm) closeText() string { return " } CUBEHIP_REGION_END " }

// barrierText is what a barrier becomes between two regions: the checker's hook, at the
// barrier's own line, with the threads' live flags where the body returns (nothing in an
// unchecked module: cubehip_regions.h).
func (f *regionForm) barrierText() string {
	live := "nullptr"
	if f.live {
		live = "__cubehip_live"
	}
	return " CUBEHIP_REGION_BARRIER(__LINE__, " + live + "); "
}

// regionStmt checks and rewrites a statement that runs per thread inside a region.
func (f *regionForm) regionStmt(s *stmt) {
	if f.escapes(s, false, false) {
		f.fail("break or continue out of a region at line %d", f.line(s.first))
		return
	}
	for k := s.first; k <= s.last; k++ {
		if plainAtomics[f.toks[k].text] && f.toks[k+1].text == "(" && f.toks[k+2].text == "&" {
			// One OS thread runs the block's threads one after another: an atomic on
			// the block's shared memory races with nothing, and a plain update is the
			// same, many times cheaper than a locked one.
			if v := f.lookup(f.toks[k+3].text); v != nil && v.shared && !f.keepAtomics {
				f.replace(k, k, "::cubehip::plain::"+f.toks[k].text)
			}
		}
		if f.toks[k].text == "return" {
			f.replace(k, k+1, "{ __cubehip_live[__cubehip_t] = 0; return; }")
		}
	}
	// Names of enclosing block-level loops must keep their value for the whole block.
	for _, vars := range f.loops {
		for _, v := range vars {
			for k := s.first; k <= s.last; k++ {
				if f.toks[k].text == v && f.modified(k, false) {
					f.fail("assigns the loop variable %s at line %d", v, f.line(k))
				}
			}
		}
	}
}
