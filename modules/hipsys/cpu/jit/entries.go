package jit

import (
	"strconv"
	"strings"
)

// program is what the jit learns from a kernel source before compiling it.
type program struct {
	entries   []entry  // extern "C" __global__ functions, in source order
	shared    []shared // extern __shared__ declarations, rewritten before compiling
	barrier   bool     // the source names __syncthreads: its kernels run as fibers
	dynShared bool     // the translation unit needs the dynamic shared buffer
	rewritten string   // the source with shared rewritten, line numbers unchanged
}

// entry is one kernel entry point: Name is what hipModuleGetFunction looks up, Ref how the
// generated launcher names the function (qualified when it sits in a namespace).
type entry struct{ Name, Ref string }

// shared is one `extern __shared__ T name[];`.
type shared struct {
	start, end int
	typ, name  string
	block      bool // inside a function body, rather than at namespace scope
}

// scope is one open brace: a namespace or extern "C" block (whose members are at
// namespace scope), or anything else (a function or class body).
type scope struct {
	namespace bool
	name      string
	externC   bool
}

// scan finds the entry points and dynamic shared declarations of src.
func scan(src string) *program {
	toks := tokenize(src)
	p := &program{}
	var stack []scope
	pendingNS, pendingName := false, ""
	seen := map[string]bool{}
	inFunction := func() bool {
		for _, s := range stack {
			if !s.namespace {
				return true
			}
		}
		return false
	}
	externC := func() bool { return len(stack) > 0 && stack[len(stack)-1].externC }
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.text == "namespace":
			pendingNS, pendingName = true, ""
		case t.kind == 'i' && pendingNS:
			pendingName = t.text
		case t.text == "extern" && i+2 < len(toks) && toks[i+1].text == `"C"` && toks[i+2].text == "{":
			stack = append(stack, scope{namespace: true, externC: true})
			i += 2
		case t.text == "{":
			s := scope{namespace: pendingNS, name: pendingName, externC: externC()}
			stack = append(stack, s)
			pendingNS = false
		case t.text == "}":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case t.text == ";":
			pendingNS = false
		case t.text == "__syncthreads" || strings.HasPrefix(t.text, "__syncthreads_"):
			p.barrier = true
		case t.text == "HIP_DYNAMIC_SHARED" || t.text == "cubehip_dyn_shared":
			p.dynShared = true
		case t.text == "extern" && i+1 < len(toks) && toks[i+1].text == "__shared__":
			if d, ok := sharedDecl(toks, i, inFunction()); ok {
				p.shared = append(p.shared, d)
				p.dynShared = true
			}
		case t.text == "__global__" && !inFunction():
			if name, ok := kernelName(toks, i); ok && !seen[name] && (externC() || declaredExternC(toks, i)) {
				seen[name] = true
				p.entries = append(p.entries, entry{Name: name, Ref: qualify(stack, name)})
			}
		}
	}
	p.rewritten = rewriteShared(src, p.shared)
	return p
}

// declaredExternC reports whether the declaration holding toks[at] starts with extern "C"
// and is not a template (a template has no symbol until instantiated).
func declaredExternC(toks []token, at int) bool {
	c := false
	for i := at - 1; i >= 0; i-- {
		switch toks[i].text {
		case ";", "{", "}":
			return c
		case "template":
			return false
		case "extern":
			if i+1 < len(toks) && toks[i+1].text == `"C"` {
				c = true
			}
		}
	}
	return c
}

// kernelName is the name declared by the __global__ at toks[at]: the first identifier
// followed by "(" that is not an attribute (__launch_bounds__ may come before or after
// __global__, and the return type in between).
func kernelName(toks []token, at int) (string, bool) {
	for i := at + 1; i+1 < len(toks); {
		t := toks[i]
		switch {
		case t.kind == 'i' && attributes[t.text] && toks[i+1].text == "(":
			i = skipParens(toks, i+1)
		case t.kind == 'i' && toks[i+1].text == "(":
			return t.text, true
		case t.text == ";" || t.text == "{" || t.text == "(":
			return "", false
		default:
			i++
		}
	}
	return "", false
}

func qualify(stack []scope, name string) string {
	var parts []string
	for _, s := range stack {
		if s.name != "" {
			parts = append(parts, s.name)
		}
	}
	if len(parts) == 0 {
		return name
	}
	return "::" + strings.Join(append(parts, name), "::")
}

// sharedDecl parses `extern __shared__ <type> name[];` starting at toks[at]. Alignment
// attributes are dropped from the type: the buffer is 64-byte aligned already.
func sharedDecl(toks []token, at int, block bool) (shared, bool) {
	end := at
	for end < len(toks) && toks[end].text != ";" {
		end++
	}
	// ... name [ ] ;
	if end >= len(toks) || end-at < 6 || toks[end-1].text != "]" || toks[end-2].text != "[" || toks[end-3].kind != 'i' {
		return shared{}, false
	}
	var typ []string
	for i := at + 2; i < end-3; {
		if attributes[toks[i].text] && i+1 < len(toks) && toks[i+1].text == "(" {
			i = skipParens(toks, i+1)
			continue
		}
		typ = append(typ, toks[i].text)
		i++
	}
	if len(typ) == 0 {
		return shared{}, false
	}
	return shared{start: toks[at].start, end: toks[end].end, typ: joinTokens(typ), name: toks[end-3].text, block: block}, true
}

// joinTokens puts a space only between two words ("unsigned int", "cub::float4").
func joinTokens(ts []string) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && isIdent(ts[i-1][len(ts[i-1])-1]) && isIdent(t[0]) {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// rewriteShared turns each `extern __shared__ T a[];` into a pointer to the OS thread's
// dynamic shared buffer (CUBEHIP_MAX_SHARED bytes, defined in the generated tail). One OS
// thread runs one block at a time, so the buffer is the running block's. At namespace
// scope the pointer is thread_local (initialized per thread on first use); in a function
// it is a local. Newlines of the declaration are kept so compiler messages keep their
// line numbers.
func rewriteShared(src string, decls []shared) string {
	if len(decls) == 0 {
		return src
	}
	var b strings.Builder
	last := 0
	for _, d := range decls {
		b.WriteString(src[last:d.start])
		if !d.block {
			b.WriteString("static thread_local ")
		}
		b.WriteString(d.typ + "* const " + d.name + " = reinterpret_cast<" + d.typ + "*>(cubehip_dyn_shared);")
		b.WriteString(strings.Repeat("\n", strings.Count(src[d.start:d.end], "\n")))
		last = d.end
	}
	b.WriteString(src[last:])
	return b.String()
}

// tail is the generated end of the translation unit: a launcher and a signature function
// per entry (CUBEHIP_ENTRY, cubehip_entry.h), and the dynamic shared buffer if used.
func (p *program) tail() string {
	var b strings.Builder
	b.WriteString("\n#line 1 \"<cubehip entries>\"\n")
	if p.dynShared {
		b.WriteString("CUBEHIP_DYN_SHARED_STORAGE\n")
	}
	mode := "loop"
	if p.barrier {
		mode = "fiber"
	}
	for _, e := range p.entries {
		b.WriteString("CUBEHIP_ENTRY(" + e.Name + ", " + e.Ref + ", " + mode + ")\n")
	}
	b.WriteString("// " + strconv.Itoa(len(p.entries)) + " entries\n")
	return b.String()
}
