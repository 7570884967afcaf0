package jit

import (
	"strings"
)

// Region formation: which expressions are block-uniform, which thread-dependent.
//
// Invariants:
//   - An expression is block-uniform only by construction: it names the block's indices
//     and sizes, parameters the body never assigns, the loop variables of enclosing
//     block-level loops, macros that name nothing thread-dependent, constants, and
//     locals registered as uniform or recomputed from uniform values. Anything else
//     (a call, a global, a memory read in a recomputed local) is not, and the check
//     fails the body rather than guess.
//   - The classification reads tokens only; it never edits.

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (f *regionForm) lookup(name string) *regionVar {
	for i := len(f.scopes) - 1; i >= 0; i-- {
		for j := len(f.scopes[i]) - 1; j >= 0; j-- {
			if f.scopes[i][j].name == name {
				return f.scopes[i][j]
			}
		}
	}
	return nil
}

func (f *regionForm) loopVar(name string) bool {
	for _, vars := range f.loops {
		if containsStr(vars, name) {
			return true
		}
	}
	return false
}

// plain reports whether toks[k] is a name rather than a member (a.x) or a qualified name.
func (f *regionForm) plain(k int) bool {
	if f.toks[k].kind != 'i' {
		return false
	}
	if k > 0 {
		p := f.toks[k-1].text
		if p == "." || p == ":" || p == ">" && k > 1 && f.toks[k-2].text == "-" {
			return false
		}
	}
	return true
}

// uniformNames are block-uniform by construction.
var uniformNames = map[string]bool{
	"blockIdx": true, "blockDim": true, "gridDim": true, "warpSize": true,
	"hipBlockIdx_x": true, "hipBlockIdx_y": true, "hipBlockIdx_z": true,
	"hipBlockDim_x": true, "hipBlockDim_y": true, "hipBlockDim_z": true,
	"hipGridDim_x": true, "hipGridDim_y": true, "hipGridDim_z": true,
}

// threadNames vary with the thread.
var threadNames = map[string]bool{"threadIdx": true, "hipThreadIdx_x": true, "hipThreadIdx_y": true, "hipThreadIdx_z": true}

// pureWords may appear in a uniform or recomputed expression: types, casts and the
// arithmetic helpers whose value only depends on their arguments.
var pureWords = map[string]bool{
	"int": true, "unsigned": true, "signed": true, "long": true, "short": true, "char": true, "bool": true,
	"float": true, "double": true, "size_t": true, "int32_t": true, "uint32_t": true, "int64_t": true, "uint64_t": true,
	"const": true, "sizeof": true, "static_cast": true, "true": true, "false": true, "min": true, "max": true,
}

// exprKind classifies the names in tokens [lo, hi): ok is false when one may differ
// between threads in a way the rewrite cannot follow (bad is its name); varying when the
// value depends on the thread's index. For a recomputed local (remat), what may change
// while the block runs (shared memory, globals) is not ok either: the value is computed
// again in each region.
func (f *regionForm) exprKind(lo, hi int, remat bool) (ok, varying bool, bad string) {
	for k := lo; k < hi; k++ {
		t := f.toks[k]
		if t.kind == 's' {
			return false, false, t.text
		}
		if remat && f.reads(k, lo) {
			return false, false, "a memory read"
		}
		if !f.plain(k) || t.text[0] >= '0' && t.text[0] <= '9' || pureWords[t.text] || uniformNames[t.text] || f.loopVar(t.text) {
			continue
		}
		if threadNames[t.text] {
			varying = true
			continue
		}
		if v := f.lookup(t.text); v != nil {
			switch {
			case v.kind == varRemat:
				varying = varying || v.varying
			case v.kind == varSlot, remat && v.store:
				return false, false, t.text
			}
			continue
		}
		call := k+1 < hi && f.toks[k+1].text == "("
		switch {
		case f.params[t.text], f.macros[t.text]:
		case f.locals[t.text], call, remat:
			// A local of another kind; a function, which may read the thread's index or
			// have effects; a global, which may change while the block runs.
			return false, false, t.text
		}
	}
	// A character literal is dropped by the tokenizer: it would vanish from a copy.
	if strings.ContainsRune(f.src[f.toks[lo].start:f.toks[hi-1].end], '\'') {
		return false, false, "a character literal"
	}
	return true, varying, ""
}

// reads reports whether toks[k] reads memory: a subscript, ->, or a unary * (one that
// follows no operand; lo is where the expression starts).
func (f *regionForm) reads(k, lo int) bool {
	switch f.toks[k].text {
	case "[":
		return true
	case ">":
		return k > lo && f.toks[k-1].text == "-" && f.toks[k-1].end == f.toks[k].start
	case "*":
		if k == lo {
			return true
		}
		p := f.toks[k-1]
		return !(p.kind == 'i' && !keywords[p.text] || p.text == ")" || p.text == "]")
	}
	return false
}

// uniform requires tokens [lo, hi) (a block-level header) to be block-uniform.
func (f *regionForm) uniform(lo, hi int, what string) {
	if lo >= hi {
		return
	}
	ok, varying, bad := f.exprKind(lo, hi, false)
	if !ok || varying {
		if bad == "" {
			bad = "the thread's index"
		}
		f.fail("the %s around a barrier at line %d is not block-uniform (%s)", what, f.line(lo), bad)
	}
}
