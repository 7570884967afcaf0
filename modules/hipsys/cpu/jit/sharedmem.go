package jit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Static __shared__ variables live in the running block's shared arena (runner.c,
// prelude/cubehip_shared.h), apart from the runtime's own thread-locals, which a
// `static thread_local` array sat beside: an overflow of one wrote over cubehip's fiber
// state or region slots. sharedEdits rewrites each declaration it can read, in a
// function or at namespace scope,
//
//	__shared__ float a[16], b[16][17];
//
// into a typedef of each declarator's type, a tag struct per variable naming it (its
// name, line, kernel and alignment, for the layout and a checker) and a reference into
// the arena:
//
//	typedef float __cubehip_sht7_a[16], __cubehip_sht7_b[16][17]; struct __cubehip_shg7_a { ... };
//	__cubehip_sht7_a& a = ::cubehip::shared_ref<__cubehip_sht7_a, __cubehip_shg7_a>(); ...
//
// all on the declaration's lines. A reference keeps every use of the name as it was
// (sizeof, indexing, &a), and regions.go's reference to a shared array taken once per
// block (`*::cubehip::opaque(&a)`) is one to the arena's memory. At namespace scope the
// reference is thread_local: a thread's arena never moves. A declaration with an
// initializer, in a class, or written by a macro is left to the prelude's
// `static thread_local` (cubehip_base.h).

// sharedQualifiers are words of a declarator that are not its name.
var sharedQualifiers = map[string]bool{
	"const": true, "volatile": true, "__restrict__": true, "__restrict": true, "restrict": true,
}

// sharedDropped are specifiers a reference into the arena cannot carry (its storage is
// the arena's) or that mean nothing here.
var sharedDropped = map[string]bool{
	"__shared__": true, "static": true, "thread_local": true, "__device__": true, "inline": true,
	"HIP_DYNAMIC_SHARED_ATTRIBUTE": true,
}

// sharedEdits rewrites the static __shared__ declarations of src (toks its tokens) into
// references into the shared arena. bodies are the kernels' bodies: a variable declared
// in one is that kernel's (its kernel number, from 1, by the kernel's name), the others'
// are every kernel's (0).
func sharedEdits(src string, toks []token, bodies []body) []edit {
	kernelOf := func(i int) int { return 0 }
	if len(bodies) > 0 {
		number := map[string]int{}
		for _, b := range bodies {
			if _, ok := number[b.name]; !ok {
				number[b.name] = len(number) + 1
			}
		}
		kernelOf = func(i int) int {
			for _, b := range bodies {
				if i > b.openTok && i < b.closeTok {
					return number[b.name]
				}
			}
			return 0
		}
	}
	var edits []edit
	// Braces: whether each open one is a function's (or inside one), and whether one is a
	// class's (its members are never the arena's).
	type brace struct{ function, class bool }
	var stack []brace
	inFunction := func() bool { return len(stack) > 0 && stack[len(stack)-1].function }
	inClass := func() bool {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].class {
				return true
			}
			if stack[i].function {
				return false
			}
		}
		return false
	}
	last := 0 // the statement boundary token before the current statement (index + 1)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.text {
		case "{":
			b := brace{function: inFunction()}
			if !b.function {
				head := toks[last:i]
				for _, h := range head {
					if h.text == "struct" || h.text == "class" || h.text == "union" || h.text == "enum" {
						b.class = true
					}
				}
				ns := i > 0 && toks[i-1].text == `"C"` // extern "C" {
				for _, h := range head {
					ns = ns || h.text == "namespace"
				}
				b.function = !b.class && !ns && i > 0 && (toks[i-1].text == ")" || toks[i-1].text == "const" ||
					toks[i-1].text == "noexcept" || toks[i-1].text == "override" || toks[i-1].text == "mutable")
			}
			stack = append(stack, b)
			last = i + 1
		case "}":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			last = i + 1
		case ";":
			last = i + 1
		case "__shared__":
			if inClass() {
				continue
			}
			e, end, ok := sharedDeclEdit(src, toks, last, i, kernelOf(i), !inFunction())
			if ok {
				edits = append(edits, e)
				i = end // the statement's ';'
				last = end + 1
			}
		}
	}
	return edits
}

// sharedDeclEdit rewrites the declaration statement toks[first:] holding __shared__ at
// toks[at], if it is one sharedEdits can read: the edit and the index of its ';'.
func sharedDeclEdit(src string, toks []token, first, at, kernel int, namespace bool) (edit, int, bool) {
	if first > at {
		return edit{}, 0, false
	}
	// The statement's end, and its top-level commas; no initializer, nothing but a
	// declaration.
	depth, angles := 0, 0
	end := -1
	var commas []int
	for k := first; k < len(toks) && end < 0; k++ {
		switch toks[k].text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case "<":
			if depth == 0 {
				angles++
			}
		case ">":
			if depth == 0 && angles > 0 {
				angles--
			}
		case ",":
			if depth == 0 && angles == 0 {
				commas = append(commas, k)
			}
		case ";":
			if depth == 0 {
				end = k
			}
		case "=", "{", "}":
			if depth == 0 {
				return edit{}, 0, false
			}
		case "extern", "typedef", "using", "template", "return", "friend", "operator":
			return edit{}, 0, false
		}
	}
	if end < 0 {
		return edit{}, 0, false
	}
	// The first declarator: back from the name before its first '[' or the end over the
	// pointer and reference marks that belong to it.
	firstEnd := end
	if len(commas) > 0 {
		firstEnd = commas[0]
	}
	name := -1
	for k := first; k < firstEnd; k++ {
		if toks[k].text == "[" {
			break
		}
		if toks[k].kind == 'i' && !sharedQualifiers[toks[k].text] && !sharedDropped[toks[k].text] && !attributes[toks[k].text] {
			name = k
		}
		if attributes[toks[k].text] && k+1 < len(toks) && toks[k+1].text == "(" {
			k = skipParens(toks, k+1) - 1
		}
	}
	if name < 0 {
		return edit{}, 0, false
	}
	declStart := name
	for declStart > first && (toks[declStart-1].text == "*" || toks[declStart-1].text == "&" || toks[declStart-1].text == "(" ||
		sharedQualifiers[toks[declStart-1].text] && declStart-2 >= first && toks[declStart-2].text == "*") {
		declStart--
	}
	// The specifiers, less what the arena's reference cannot carry; an alignment asked for
	// is kept for the layout.
	var spec []string
	align := "" // "(n)" or "(T)"
	for k := first; k < declStart; k++ {
		w := toks[k].text
		switch {
		case sharedDropped[w]:
		case (w == "__align__" || w == "alignas") && k+1 < len(toks) && toks[k+1].text == "(":
			j := skipParens(toks, k+1)
			align = "(" + tokenText(toks[k+2:j-1]) + ")"
			k = j - 1
		case w == "__attribute__" && k+1 < len(toks) && toks[k+1].text == "(":
			j := skipParens(toks, k+1)
			for a := k + 1; a < j; a++ {
				if toks[a].text == "aligned" || toks[a].text == "__aligned__" {
					align = "(64)" // GCC's largest useful alignment, when none is given
					if a+1 < j && toks[a+1].text == "(" {
						align = "(" + tokenText(toks[a+2:skipParens(toks, a+1)-1]) + ")"
					}
				}
			}
			k = j - 1
		case w == "(" || w == ")" || w == ":" && !(k+1 < declStart && toks[k+1].text == ":") && !(k > first && toks[k-1].text == ":"):
			return edit{}, 0, false // a label, a macro's call: not a declaration sharedEdits reads
		default:
			spec = append(spec, w)
		}
	}
	if len(spec) == 0 {
		return edit{}, 0, false
	}
	// Each declarator, its name replaced by its type's.
	starts := append([]int{declStart}, make([]int, 0, len(commas))...)
	for _, c := range commas {
		starts = append(starts, c+1)
	}
	id := strconv.Itoa(at)
	var typedefs, rest strings.Builder
	typedefs.WriteString("typedef " + joinTokens(spec) + " ")
	for n, s := range starts {
		e := end
		if n+1 < len(starts) {
			e = starts[n+1] - 1
		}
		nameAt := -1
		for k := s; k < e; k++ {
			if toks[k].text == "[" {
				break
			}
			if toks[k].kind == 'i' && !sharedQualifiers[toks[k].text] {
				nameAt = k
				break
			}
		}
		if nameAt < 0 || e <= s {
			return edit{}, 0, false
		}
		v := toks[nameAt].text
		typ := "__cubehip_sht" + id + "_" + v
		tag := "__cubehip_shg" + id + "_" + v
		if n > 0 {
			typedefs.WriteString(", ")
		}
		typedefs.WriteString(tokenText(toks[s:nameAt]) + " " + typ + " " + tokenText(toks[nameAt+1:e]))
		// An alignment asked for, as alignas takes it (a type or a value), is a member's,
		// which the tag's own alignment then reports.
		alignment := " static unsigned long align() { return 0; }"
		if align != "" {
			alignment = " alignas" + align + " char __cubehip_a; static unsigned long align() { return alignof(" + tag + "); }"
		}
		rest.WriteString(" struct " + tag + " { static const char* name() { return \"" + v + "\"; } static unsigned line() { return __LINE__; }" +
			" static unsigned kernel() { return " + strconv.Itoa(kernel) + "; }" + alignment + " };")
		if namespace {
			rest.WriteString(" static thread_local")
		}
		rest.WriteString(" " + typ + "& " + v + " = ::cubehip::shared_ref<" + typ + ", " + tag + ">();")
	}
	typedefs.WriteString(";")
	old := src[toks[first].start:toks[end].end]
	text := typedefs.String() + rest.String() + strings.Repeat("\n", strings.Count(old, "\n"))
	return edit{toks[first].start, toks[end].end, text}, end, true
}

// tokenText is toks joined as joinTokens does: comments and line breaks left out, so a
// rewrite stays on its lines.
func tokenText(toks []token) string {
	ts := make([]string, len(toks))
	for i, t := range toks {
		ts[i] = t.text
	}
	return joinTokens(ts)
}

// sharedError is the error of a launch whose dynamic shared memory, with the module's
// static variables, is more than a block may have.
func (f *Function) sharedError(dyn uint32) error {
	return hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidValue, fmt.Sprintf(
		"kernel %s: %d bytes of dynamic shared memory and %d of its module's static __shared__ variables, over the %d bytes a block may have",
		f.name, dyn, f.m.staticShared, MaxSharedMemPerBlock))
}

// StaticSharedBytes is the static shared memory a launch of the kernel holds: its
// module's static __shared__ variables as laid out in the shared arena (those outside any
// kernel and the largest kernel's own; cubehip_shared.h), which with the dynamic bytes is
// at most MaxSharedMemPerBlock.
func (f *Function) StaticSharedBytes() uint64 { return f.m.staticShared }
