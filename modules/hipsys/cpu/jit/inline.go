package jit

import (
	"strconv"
	"strings"
)

// Warp reductions are usually written as a __device__ helper the kernel calls, `v =
// warp_sum(v)`, and a shuffle in a __device__ function is out of the regions rewrite's
// sight: every entry of the module ran as fibers. inlineHelpers puts such a helper's body
// in place of each of its calls in the entries first, so the shuffles sit in entry bodies,
// where regions take them (and the helper, then called nowhere, is left out).
//
// A helper is inlined when it is a plain __device__ function (not a template, no
// reference, array or defaulted parameter) whose body holds a shuffle, no barrier nor
// other warp function, no static, and one return, its last statement, of a value; every
// one of its calls is a whole statement of an entry body, `x = f(args);` or `T x =
// f(args);` (T without const, auto or &); and its body names nothing the calling entry
// declares (its own parameters aside: they are renamed), so no name changes meaning.
// Otherwise the source is left as it was, and the fibers run it as before. Line numbers
// are kept: the inlined text goes on the call's line.

// helper is one inlinable __device__ function.
type helper struct {
	name           string
	params         []helperParam
	first, last    int // the definition's tokens, from its first specifier to its }
	bodyLo, bodyHi int // the body's statements but the final return, tokens [lo, hi)
	retLo, retHi   int // the returned expression, tokens [lo, hi)
}

type helperParam struct{ typ, name string }

// inlineHelpers returns src with its inlinable helpers' calls in entry bodies replaced by
// their bodies, or src itself when there is nothing to inline; why says why a helper was
// not inlined, for the debug log ("" when none was refused).
func inlineHelpers(src string) (out, why string) {
	toks := tokenize(src)
	helpers := findHelpers(toks)
	if len(helpers) == 0 {
		return src, ""
	}
	var bodies []body
	for i := range toks {
		if toks[i].text == "__global__" {
			if at, ok := kernelName(toks, i); ok {
				if b, ok := kernelBody(toks, at); ok {
					bodies = append(bodies, b)
				}
			}
		}
	}
	var edits []edit
	n := 0
	for _, h := range helpers {
		var calls []edit
		ok := true
		for i := range toks {
			if toks[i].text != h.name || i >= h.first && i <= h.last {
				continue
			}
			b := enclosing(bodies, i)
			if b == nil {
				ok = false
				why = h.name + " not inlined: named outside the entries at line " + strconv.Itoa(lineOf(src, toks[i].start))
				break
			}
			e, good := inlineCall(src, toks, h, *b, i, n)
			if !good {
				ok = false
				why = h.name + " not inlined: its call at line " + strconv.Itoa(lineOf(src, toks[i].start)) +
					" is not a statement `x = f(...)` of its own, or its body names what the entry declares"
				break
			}
			calls = append(calls, e)
			n++
		}
		if !ok || len(calls) == 0 {
			continue
		}
		edits = append(edits, calls...)
		// The helper itself is left out, its lines kept.
		a, z := toks[h.first].start, toks[h.last].end
		edits = append(edits, edit{a, z, strings.Repeat("\n", strings.Count(src[a:z], "\n"))})
	}
	if len(edits) == 0 {
		return src, why
	}
	return applyEdits(src, edits), why
}

// lineOf is the 1-based line of byte offset off.
func lineOf(src string, off int) int { return strings.Count(src[:off], "\n") + 1 }

// enclosing is the entry body holding token i, nil if none does.
func enclosing(bodies []body, i int) *body {
	for k := range bodies {
		if i > bodies[k].openTok && i < bodies[k].closeTok {
			return &bodies[k]
		}
	}
	return nil
}

// findHelpers finds the source's inlinable helpers (at namespace scope).
func findHelpers(toks []token) []helper {
	var hs []helper
	depth := 0
	for i := 0; i < len(toks); i++ {
		switch toks[i].text {
		case "{":
			depth++
		case "}":
			depth--
		case "__device__":
			if h, ok := parseHelper(toks, i); ok && (depth == 0 || namespaceOnly(toks, i)) {
				hs = append(hs, h)
			}
		}
	}
	return hs
}

// namespaceOnly reports whether every brace open at toks[at] is a namespace's or an
// extern "C" block's.
func namespaceOnly(toks []token, at int) bool {
	var stack []bool // namespace-like
	for i := 0; i < at; i++ {
		switch toks[i].text {
		case "{":
			ns := i >= 2 && toks[i-2].text == "namespace" || i >= 1 && toks[i-1].text == "namespace" ||
				i >= 2 && toks[i-2].text == "extern" && toks[i-1].text == `"C"`
			stack = append(stack, ns)
		case "}":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	for _, ns := range stack {
		if !ns {
			return false
		}
	}
	return true
}

// specifiers may come before a helper's return type.
var specifiers = map[string]bool{
	"__device__": true, "__host__": true, "inline": true, "__inline__": true, "__forceinline__": true,
	"static": true, "constexpr": true,
}

// parseHelper parses the definition whose __device__ is toks[at].
func parseHelper(toks []token, at int) (helper, bool) {
	first := at
	for first > 0 && specifiers[toks[first-1].text] {
		first--
	}
	if first > 0 && (toks[first-1].text == ">" || toks[first-1].text == "template") {
		return helper{}, false // a template
	}
	// Specifiers and a return type, then name ( params ) { body }.
	k := at
	for k < len(toks) && toks[k].text != "(" && toks[k].text != ";" && toks[k].text != "{" {
		if toks[k].text == "__global__" || toks[k].text == "<" || toks[k].text == "&" || toks[k].text == "operator" {
			return helper{}, false
		}
		k++
	}
	if k >= len(toks) || toks[k].text != "(" || k-1 <= at || toks[k-1].kind != 'i' {
		return helper{}, false
	}
	h := helper{name: toks[k-1].text, first: first}
	if specifiers[h.name] {
		return helper{}, false
	}
	close := skipParens(toks, k) - 1
	if close+1 >= len(toks) || toks[close+1].text != "{" {
		return helper{}, false
	}
	// Parameters: type tokens then a name, no &, [], default or pack.
	if close > k+1 && !(close == k+2 && toks[k+1].text == "void") {
		lo := k + 1
		for j := k + 1; j <= close; j++ {
			if j < close && toks[j].text != "," {
				switch toks[j].text {
				case "&", "[", "=", ".", "(":
					return helper{}, false
				}
				continue
			}
			if j-lo < 2 || toks[j-1].kind != 'i' {
				return helper{}, false
			}
			var typ []string
			for _, t := range toks[lo : j-1] {
				typ = append(typ, t.text)
			}
			h.params = append(h.params, helperParam{joinTokens(typ), toks[j-1].text})
			lo = j + 1
		}
	}
	open := close + 1
	end := matchBrace(toks, open)
	if end < 0 {
		return helper{}, false
	}
	h.last = end
	// One return, the body's last statement, of a value.
	ret := -1
	shfl := false
	for j := open + 1; j < end; j++ {
		t := toks[j].text
		switch {
		case t == "return":
			if ret >= 0 {
				return helper{}, false
			}
			ret = j
		case shuffles[t]:
			shfl = true
		case t == "__syncthreads" || strings.HasPrefix(t, "__syncthreads_") || warpNames[t] || t == "static" || t == "asm" || t == "__asm__" || t == "goto":
			return helper{}, false
		}
	}
	if !shfl || ret < 0 || toks[ret+1].text == ";" || toks[end-1].text != ";" || names(toks, open, end, h.name) {
		return helper{}, false
	}
	for j := ret + 1; j < end-1; j++ {
		if toks[j].text == ";" {
			return helper{}, false
		}
	}
	// The return must be at the body's top level.
	depth := 0
	for j := open + 1; j < ret; j++ {
		switch toks[j].text {
		case "{", "(":
			depth++
		case "}", ")":
			depth--
		}
	}
	if depth != 0 || ret > open+1 && toks[ret-1].text != ";" && toks[ret-1].text != "}" && toks[ret-1].text != "{" {
		return helper{}, false
	}
	h.bodyLo, h.bodyHi, h.retLo, h.retHi = open+1, ret, ret+1, end-1
	return h, true
}

// inlineCall returns the edit that replaces the statement calling h at toks[at] (in entry
// body b) with h's body, instance n naming its parameters apart.
func inlineCall(src string, toks []token, h helper, b body, at, n int) (edit, bool) {
	if at+1 >= len(toks) || toks[at+1].text != "(" {
		return edit{}, false
	}
	close := skipParens(toks, at+1) - 1
	if close+1 >= b.closeTok || toks[close+1].text != ";" {
		return edit{}, false
	}
	// The statement: [T] lhs = h(args);
	if at < 2 || toks[at-1].text != "=" || toks[at-2].kind != 'i' {
		return edit{}, false
	}
	lhs := at - 2
	start := lhs
	for start-1 > b.openTok && toks[start-1].text != ";" && toks[start-1].text != "{" && toks[start-1].text != "}" {
		start--
		switch toks[start].text {
		case "const", "auto", "&", "*", ",", "(", ")", "[", "]", "static", "constexpr", "=", "<", ">", ".":
			return edit{}, false
		}
		if toks[start].kind != 'i' {
			return edit{}, false
		}
	}
	if start > b.openTok+1 {
		// A statement follows one of ; { }: not the body of an unbraced if, for or while,
		// which the block put in its place would still be, but a condition's tail.
		if p := toks[start-1].text; p == ")" || p == "else" {
			return edit{}, false
		}
	}
	var decl []string
	for _, t := range toks[start:lhs] {
		decl = append(decl, t.text)
	}
	// Arguments, split at top-level commas.
	var args []string
	if close > at+2 {
		lo, depth := at+2, 0
		for j := at + 2; j <= close; j++ {
			switch t := toks[j].text; {
			case t == "(" || t == "[" || t == "{":
				depth++
			case (t == ")" || t == "]" || t == "}") && j < close:
				depth--
			case t == "," && depth == 0 || j == close:
				args = append(args, joinRange(src, toks, lo, j))
				lo = j + 1
			}
		}
	}
	if len(args) != len(h.params) {
		return edit{}, false
	}
	// The helper's names must mean the same in the entry.
	f := &regionForm{src: src, toks: toks, lo: b.openTok + 1, hi: b.closeTok, params: map[string]bool{}, locals: map[string]bool{}, pred: -1}
	items, ok := f.parseSeq(f.lo, f.hi)
	if !ok {
		return edit{}, false
	}
	f.declared(items)
	mine := map[string]bool{}
	for _, p := range h.params {
		mine[p.name] = true
	}
	for _, p := range b.params {
		f.locals[p] = true
	}
	for j := h.bodyLo; j < h.retHi; j++ {
		if t := toks[j]; t.kind == 'i' && !mine[t.text] && f.locals[t.text] && (j == 0 || toks[j-1].text != ".") {
			return edit{}, false
		}
	}
	if strings.ContainsRune(src[toks[h.bodyLo].start:toks[h.retHi-1].end], '\'') || strings.ContainsRune(src[toks[at].start:toks[close].end], '\'') {
		return edit{}, false // the tokenizer drops character literals
	}
	prefix := "__cubehip_i" + strconv.Itoa(n) + "_"
	rename := func(lo, hi int) string {
		var b strings.Builder
		for j := lo; j < hi; j++ {
			if j > lo && toks[j].start > toks[j-1].end {
				b.WriteByte(' ')
			}
			t := toks[j].text
			if mine[t] && toks[j].kind == 'i' && toks[j-1].text != "." {
				t = prefix + t
			}
			b.WriteString(t)
		}
		return b.String()
	}
	var out strings.Builder
	name := toks[lhs].text
	if len(decl) > 0 {
		out.WriteString(strings.Join(decl, " ") + " " + name + "; ")
	}
	out.WriteString("{ ")
	for i, p := range h.params {
		out.WriteString(p.typ + " " + prefix + p.name + " = " + args[i] + "; ")
	}
	if h.bodyLo < h.bodyHi {
		out.WriteString(rename(h.bodyLo, h.bodyHi) + " ")
	}
	out.WriteString(name + " = " + rename(h.retLo, h.retHi) + "; }")
	a, z := toks[start].start, toks[close+1].end
	return edit{a, z, out.String() + strings.Repeat("\n", strings.Count(src[a:z], "\n"))}, true
}

// joinRange is tokens [lo, hi) on one line: a space where the source had anything between
// two tokens, nothing where they touch.
func joinRange(src string, toks []token, lo, hi int) string {
	var b strings.Builder
	for j := lo; j < hi; j++ {
		if j > lo && toks[j].start > toks[j-1].end {
			b.WriteByte(' ')
		}
		b.WriteString(toks[j].text)
	}
	return b.String()
}

// names reports whether tokens (lo, hi) hold name (a helper calling itself).
func names(toks []token, lo, hi int, name string) bool {
	for j := lo + 1; j < hi; j++ {
		if toks[j].text == name {
			return true
		}
	}
	return false
}
