package jit

import (
	"strconv"
	"strings"
)

// Implicit warp-synchronous code: lanes of a warp that hand each other values through
// shared memory with no barrier between the write and the read, relying on the warp's
// lanes running in lockstep (the unrolled last steps of a shared-memory reduction,
// `sdata[tid] += sdata[tid + 32]; sdata[tid] += sdata[tid + 16]; ...` on a volatile
// pointer, a warp's scan in shared memory). It is correct on AMD's wavefronts and was on
// NVIDIA's warps before Volta; here a warp's lanes run one after another between
// barriers (a loop, regions or fibers alike), so thread 0 reads sdata[16] before thread
// 16 has written it, and the answer is silently wrong. Such a program is refused when it
// is compiled, with the construct and its lines named, rather than run.
//
// What is refused, per function (kernels and __device__ functions alike): a shared array,
// or a volatile or shared-derived pointer, that some statement writes at an index that
// depends on the thread and another statement reads at a different such index, with no
// barrier between them: no __syncthreads, __syncwarp, warp function or cooperative
// groups' sync, nor a call of a function holding one. A loop without a barrier repeats
// its statements, so a statement that reads what it wrote one iteration before counts
// too, as does one statement reading a lower thread's slot (sdata[tid - 1]) that a lower
// thread has already overwritten. One statement reading a higher index than it writes
// (sdata[tid] += sdata[tid + s], the steps of a reduction between barriers) reads the
// old value here as on a GPU, and is not refused. Correct code separates a write and
// another thread's read with a barrier, so it is never refused for that reason; what is
// not caught is sharing through pointers the scan cannot follow (a plain pointer
// parameter of a helper, an atomic's address).

// warpSyncAccess is one indexed access of a shared name.
type warpSyncAccess struct {
	name, index string
	write       bool
	tid         bool // the index depends on the thread
	phase, stmt int
	loop        bool // inside a loop without a barrier: its statements repeat in one phase
	tok         int
}

// warpSynchronous returns the compile log refusing src (called file in the log) when it
// holds implicit warp-synchronous code, "" otherwise. live limits the scan to the lines the
// preprocessor kept (nil: every line).
func warpSynchronous(src, file string, live map[int]bool) string {
	if !strings.Contains(src, "volatile") && !strings.Contains(src, "__shared__") && !strings.Contains(src, "HIP_DYNAMIC_SHARED") {
		return ""
	}
	all := tokenize(src)
	lines := newLineIndex(src)
	toks := all[:0:0]
	for _, t := range all {
		if live == nil || live[lines.of(t.start)] {
			toks = append(toks, t)
		}
	}
	shared := sharedNames(toks)
	fns := functionBodies(toks)
	barriers := barrierFunctions(toks, fns)
	for _, fn := range fns {
		if r, w, ok := fn.warpSync(toks, shared, barriers); ok {
			name := toks[r.tok].text
			return file + ":" + strconv.Itoa(lines.of(toks[r.tok].start)) + ": error: implicit warp-synchronous code: " +
				name + "[" + r.index + "] reads shared memory that another thread writes as " + name + "[" + w.index +
				"] at line " + strconv.Itoa(lines.of(toks[w.tok].start)) + " with no barrier between them. A GPU's warp runs " +
				"its lanes in lockstep, so such code works there within one warp; the cpu device runs a warp's lanes one " +
				"after another and would give wrong results, so it refuses it. Put __syncwarp() (or __syncthreads()) " +
				"between the write and the read, as CUDA requires since Volta, or exchange the values with warp shuffles"
		}
	}
	return ""
}

// sharedNames are the names the source declares __shared__ (static or dynamic, in any
// order of the specifiers) or through HIP_DYNAMIC_SHARED.
func sharedNames(toks []token) map[string]bool {
	names := map[string]bool{}
	for i, t := range toks {
		switch t.text {
		case "HIP_DYNAMIC_SHARED":
			if j := skipParens(toks, i+1); j-2 > i && toks[j-2].kind == 'i' {
				names[toks[j-2].text] = true
			}
		case "__shared__":
			// The declarators from the statement's start to its ;.
			s := i
			for s > 0 && toks[s-1].text != ";" && toks[s-1].text != "{" && toks[s-1].text != "}" {
				s--
			}
			depth := 0
			for j := s; j < len(toks) && toks[j].text != ";"; j++ {
				switch toks[j].text {
				case "(", "[", "<":
					depth++
				case ")", "]", ">":
					depth--
				case "=":
					// An initializer: skip to the next declarator.
					for j+1 < len(toks) && toks[j+1].text != ";" && toks[j+1].text != "," {
						j++
					}
				}
				if depth == 0 && toks[j].kind == 'i' && j+1 < len(toks) {
					if n := toks[j+1].text; n == "[" || n == ";" || n == "," || n == "=" {
						names[toks[j].text] = true
					}
				}
			}
		}
	}
	return names
}

// function is one function definition of the source: its name, parameters (name and
// whether each is a volatile pointer or array), whether it is a kernel, and its body's
// braces.
type function struct {
	name        string
	params      []string
	volatile    map[string]bool
	kernel      bool
	open, close int
}

// functionBodies finds the function definitions at namespace scope (in namespaces and
// extern "C" blocks too).
func functionBodies(toks []token) []function {
	var fns []function
	for i := 0; i < len(toks); i++ {
		if toks[i].text != "{" {
			continue
		}
		start := i
		for start > 0 && toks[start-1].text != ";" && toks[start-1].text != "{" && toks[start-1].text != "}" {
			start--
		}
		decl := toks[start:i]
		end := matchBrace(toks, i)
		if end < 0 {
			return fns
		}
		if len(decl) == 0 || !hasParen(decl) || declStarts(decl, "namespace", "struct", "class", "union", "enum") || isExternC(decl) {
			if declStarts(decl, "namespace") || isExternC(decl) || len(decl) == 0 {
				continue // a namespace's members are at namespace scope: look inside
			}
			i = end
			continue
		}
		at, ok := kernelName(toks, start-1)
		if !ok || at >= i {
			i = end
			continue
		}
		fn := function{name: toks[at].text, volatile: map[string]bool{}, open: i, close: end}
		for _, t := range decl {
			fn.kernel = fn.kernel || t.text == "__global__"
		}
		for _, p := range splitParams(toks, at+1) {
			name, vol, ptr := "", false, false
			for k, t := range p {
				switch {
				case t.text == "volatile":
					vol = true
				case t.text == "*" || t.text == "[":
					ptr = true
				case t.kind == 'i' && (k+1 == len(p) || p[k+1].text == "[" || p[k+1].text == "="):
					if name == "" {
						name = t.text
					}
				}
			}
			if name != "" {
				fn.params = append(fn.params, name)
				fn.volatile[name] = vol && ptr
			}
		}
		fns = append(fns, fn)
		i = end
	}
	return fns
}

func hasParen(ts []token) bool {
	for _, t := range ts {
		if t.text == "(" {
			return true
		}
	}
	return false
}

func declStarts(ts []token, words ...string) bool {
	for _, t := range ts {
		if t.text == "template" || t.text == "typedef" {
			continue
		}
		for _, w := range words {
			if t.text == w {
				return true
			}
		}
		if t.text == "<" || t.text == "(" {
			return false
		}
	}
	return false
}

func isExternC(ts []token) bool {
	return len(ts) == 2 && ts[0].text == "extern" && ts[1].text == `"C"`
}

// splitParams splits the parameter list whose ( is toks[open] at its top-level commas.
func splitParams(toks []token, open int) [][]token {
	var out [][]token
	var cur []token
	depth := 0
	for i := open; i < len(toks); i++ {
		t := toks[i]
		switch t.text {
		case "(", "[", "<":
			depth++
			if depth == 1 && t.text == "(" {
				continue
			}
		case ")", "]", ">":
			depth--
			if depth == 0 {
				if len(cur) > 0 {
					out = append(out, cur)
				}
				return out
			}
		case ",":
			if depth == 1 {
				out = append(out, cur)
				cur = nil
				continue
			}
		}
		cur = append(cur, t)
	}
	return out
}

// barrierFunctions are the functions whose bodies hold a barrier or a warp function,
// directly or through another such function: a call of one separates what comes before
// it from what comes after, as the barrier itself does.
func barrierFunctions(toks []token, fns []function) map[string]bool {
	out := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, fn := range fns {
			if out[fn.name] {
				continue
			}
			for k := fn.open; k < fn.close; k++ {
				if isBoundary(toks, k, out) {
					out[fn.name], changed = true, true
					break
				}
			}
		}
	}
	return out
}

// isBoundary reports whether toks[k] starts a barrier, a warp function or cooperative
// groups' sync (g.sync(), cg::sync(g)), or a call of a function holding one.
func isBoundary(toks []token, k int, calls map[string]bool) bool {
	t := toks[k]
	if t.kind != 'i' || k+1 >= len(toks) || toks[k+1].text != "(" {
		return false
	}
	switch {
	case t.text == "__syncthreads" || strings.HasPrefix(t.text, "__syncthreads_"):
		return true
	case warpNames[t.text]:
		return true
	case t.text == "sync" || t.text == "barrier_wait" || t.text == "wait":
		return k > 0 && (toks[k-1].text == "." || toks[k-1].text == ":" || toks[k-1].text == ">")
	}
	return calls[t.text]
}

// stmtEnd returns the index of the last token of the statement starting at toks[i].
func stmtEnd(toks []token, i, hi int) int {
	if i >= hi {
		return hi
	}
	switch toks[i].text {
	case "{":
		if e := matchBrace(toks, i); e >= 0 {
			return e
		}
		return hi
	case "if", "for", "while", "switch":
		if i+1 < hi && toks[i+1].text == "(" {
			e := stmtEnd(toks, skipParens(toks, i+1), hi)
			if toks[i].text == "if" && e+1 < hi && toks[e+1].text == "else" {
				e = stmtEnd(toks, e+2, hi)
			}
			return e
		}
	case "do":
		e := stmtEnd(toks, i+1, hi) // the body, then while (...) ;
		for e+1 < hi && toks[e+1].text != ";" {
			e++
		}
		return min(e+1, hi)
	}
	depth := 0
	for j := i; j < hi; j++ {
		switch toks[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ";":
			if depth == 0 {
				return j
			}
		}
	}
	return hi
}

// warpSync looks for a write and another thread's read of one shared name in one phase
// of fn's body (between two barriers), and returns the read and the write.
func (fn *function) warpSync(toks []token, shared, barriers map[string]bool) (warpSyncAccess, warpSyncAccess, bool) {
	lo, hi := fn.open+1, fn.close
	cands := map[string]bool{}
	for n := range shared {
		cands[n] = true
	}
	for n, v := range fn.volatile {
		cands[n] = cands[n] || v
	}
	// Locals that are volatile pointers or arrays, or pointers into a shared name.
	for k := lo; k+2 < hi; k++ {
		if toks[k].text != "*" || toks[k+1].kind != 'i' || toks[k+2].text != "=" || toks[k+3].text == "=" {
			continue
		}
		s := k
		for s > lo && toks[s-1].text != ";" && toks[s-1].text != "{" && toks[s-1].text != "}" && toks[s-1].text != "(" {
			s--
		}
		e := stmtEnd(toks, k, hi)
		from := false
		for j := s; j < e; j++ {
			from = from || toks[j].text == "volatile" || j > k+2 && cands[toks[j].text]
		}
		if from {
			cands[toks[k+1].text] = true
		}
	}
	for k := lo; k+1 < hi; k++ {
		if toks[k].text == "volatile" {
			for j := k + 1; j+1 < hi && toks[j].text != ";" && toks[j].text != "="; j++ {
				if toks[j].kind == 'i' && toks[j+1].text == "[" {
					cands[toks[j].text] = true
				}
			}
		}
	}
	if len(cands) == 0 {
		return warpSyncAccess{}, warpSyncAccess{}, false
	}
	tainted := fn.threadDependent(toks)

	// Loops: a loop without a barrier repeats its statements within one phase; a loop
	// with one continues the phase its body ends in into the next iteration's first,
	// and ends a phase where it exits (what follows the loop runs after the body's last
	// barrier).
	type loop struct {
		b, e    int
		barrier bool
	}
	var loops []loop
	for k := lo; k < hi; k++ {
		var b int
		switch {
		case (toks[k].text == "for" || toks[k].text == "while") && k+1 < hi && toks[k+1].text == "(":
			b = skipParens(toks, k+1)
		case toks[k].text == "do":
			b = k + 1
		default:
			continue
		}
		if b >= hi || toks[b].text == ";" {
			continue // the while of a do ... while
		}
		e := min(stmtEnd(toks, b, hi), hi-1)
		l := loop{b: b, e: e}
		for j := b; j <= e && !l.barrier; j++ {
			l.barrier = isBoundary(toks, j, barriers)
		}
		loops = append(loops, l)
	}
	exits := map[int]int{} // token -> loops with barriers ending just before it
	for _, l := range loops {
		if l.barrier {
			exits[l.e+1]++
		}
	}
	// Ifs with an else: the else starts from the phase the if started in, not from where
	// the then-branch ended, and an access in one branch is never paired with one in the
	// other (a thread runs one of them).
	type branches struct{ ifTok, t0, t1, e0, e1 int }
	var ifs []branches
	elseAt := map[int]int{} // an else-branch's first token -> its if's token
	for k := lo; k+1 < hi; k++ {
		if toks[k].text != "if" || toks[k+1].text != "(" {
			continue
		}
		t0 := skipParens(toks, k+1)
		t1 := min(stmtEnd(toks, t0, hi), hi-1)
		if t1+2 >= hi || toks[t1+1].text != "else" {
			continue
		}
		e1 := min(stmtEnd(toks, t1+2, hi), hi-1)
		ifs = append(ifs, branches{k, t0, t1, t1 + 2, e1})
		elseAt[t1+2] = k
	}
	phase := make([]int, hi+1)
	stmt := make([]int, hi+1)
	var joins [][2]int
	p, st := 0, 0
	for k := lo; k <= hi; k++ {
		p += exits[k]
		if at, ok := elseAt[k]; ok && phase[at] != p {
			p++
			joins = append(joins, [2]int{p, phase[at]})
		}
		if k < hi && isBoundary(toks, k, barriers) {
			p++
		}
		if k < hi {
			switch toks[k].text {
			case ";", "{", "}":
				st++
			}
		}
		phase[k], stmt[k] = p, st
	}
	parent := make([]int, p+1) // phases joined by a loop's repetition
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	for _, j := range joins {
		if a, b := find(j[0]), find(j[1]); a != b {
			parent[a] = b
		}
	}
	exclusive := func(a, b int) bool {
		for _, f := range ifs {
			if a >= f.t0 && a <= f.t1 && b >= f.e0 && b <= f.e1 || b >= f.t0 && b <= f.t1 && a >= f.e0 && a <= f.e1 {
				return true
			}
		}
		return false
	}
	inLoop := make([]bool, hi)
	for _, l := range loops {
		if !l.barrier {
			for j := l.b; j <= l.e; j++ {
				inLoop[j] = true
			}
		} else if a, b := find(phase[l.e]), find(phase[l.b]); a != b {
			parent[a] = b
		}
	}

	var acc []warpSyncAccess
	for k := lo; k+1 < hi; k++ {
		t := toks[k]
		if t.kind != 'i' || !cands[t.text] || toks[k+1].text != "[" || k > 0 && toks[k-1].text == "." {
			continue
		}
		if k >= 2 && toks[k-1].text == "&" && toks[k-2].kind == 'p' && toks[k-2].text != ")" && toks[k-2].text != "]" && toks[k-2].text != "&" {
			continue // an address (an atomic's), not an access
		}
		var idx strings.Builder
		dep := false
		j := k + 1
		for j < hi && toks[j].text == "[" {
			e := skipBrackets(toks, j)
			if idx.Len() > 0 {
				idx.WriteString("][")
			}
			for q := j + 1; q < e-1; q++ {
				idx.WriteString(toks[q].text)
				dep = dep || toks[q].kind == 'i' && tainted[toks[q].text]
			}
			j = e
		}
		for j+1 < hi && toks[j].text == "." && toks[j+1].kind == 'i' {
			j += 2
		}
		write := isAssignment(toks, j, hi) || k >= 2 && (toks[k-1].text == "+" && toks[k-2].text == "+" || toks[k-1].text == "-" && toks[k-2].text == "-")
		a := warpSyncAccess{name: t.text, index: idx.String(), write: write, tid: dep, phase: find(phase[k]), stmt: stmt[k], loop: inLoop[k], tok: k}
		acc = append(acc, a)
		if write && compoundAssignment(toks, j, hi) {
			a.write = false
			acc = append(acc, a)
		}
	}
	for _, r := range acc {
		if r.write || !r.tid {
			continue
		}
		same := false // the index is one the phase writes too: the thread's own slot
		for _, w := range acc {
			same = same || w.write && w.name == r.name && w.phase == r.phase && w.index == r.index
		}
		if same {
			continue
		}
		for _, w := range acc {
			if !w.write || !w.tid || w.name != r.name || w.phase != r.phase || exclusive(w.tok, r.tok) {
				continue
			}
			if w.stmt != r.stmt || w.loop || r.loop || !strings.HasPrefix(r.index, w.index+"+") {
				return r, w, true
			}
		}
	}
	return warpSyncAccess{}, warpSyncAccess{}, false
}

// isAssignment reports whether the tokens at j assign to what precedes them: =, op=,
// <<=, >>=, ++ or --.
func isAssignment(toks []token, j, hi int) bool {
	if j >= hi {
		return false
	}
	next := func(k int) string {
		if k < hi {
			return toks[k].text
		}
		return ""
	}
	switch t := toks[j].text; t {
	case "=":
		return next(j+1) != "="
	case "+", "-":
		return next(j+1) == "=" || next(j+1) == t
	case "*", "/", "%", "&", "|", "^":
		return next(j+1) == "=" && next(j+2) != "="
	case "<", ">":
		return next(j+1) == t && next(j+2) == "="
	}
	return false
}

// compoundAssignment reports whether the assignment at j also reads its target (op=,
// ++, --).
func compoundAssignment(toks []token, j, hi int) bool {
	return j < hi && toks[j].text != "="
}

// threadDependent are the names of fn whose value may differ between the threads of a
// block: the thread's index, a __device__ function's parameters (its callers' values are
// unknown), and the locals assigned from such names.
func (fn *function) threadDependent(toks []token) map[string]bool {
	dep := map[string]bool{"threadIdx": true, "hipThreadIdx_x": true, "hipThreadIdx_y": true, "hipThreadIdx_z": true, "__lane_id": true}
	if !fn.kernel {
		for _, p := range fn.params {
			dep[p] = true
		}
	}
	lo, hi := fn.open+1, fn.close
	for changed := true; changed; {
		changed = false
		for k := lo; k+1 < hi; k++ {
			t := toks[k]
			if t.kind != 'i' || dep[t.text] || !isAssignment(toks, k+1, hi) || k > 0 && toks[k-1].text == "." {
				continue
			}
			depth := 0
			for j := k + 1; j < hi; j++ {
				x := toks[j].text
				if x == "(" || x == "[" || x == "{" {
					depth++
				} else if x == ")" || x == "]" || x == "}" {
					if depth--; depth < 0 {
						break
					}
				} else if depth == 0 && (x == ";" || x == ",") {
					break
				}
				if toks[j].kind == 'i' && dep[x] {
					dep[t.text], changed = true, true
					break
				}
			}
		}
	}
	return dep
}
