package jit

import (
	"sort"
	"strconv"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// program is what the jit learns from a kernel source before compiling it.
type program struct {
	entries     []entry  // extern "C" __global__ functions, in source order
	bodies      []body   // the kernels' bodies, wrapped in the thread loop before compiling
	cxx         bool     // C++-linkage and template kernels are wrapped too (for name expressions)
	exprs       []string // the program's name expressions (names.go), in the order added
	shared      []shared // extern __shared__ declarations, rewritten before compiling
	barrier     bool     // the source names __syncthreads
	warps       bool     // the source names a warp function: fiber entries scheduled as warps too
	dynShared   bool     // the translation unit needs the dynamic shared buffer
	tlsBuiltins bool     // threadIdx & co. are named outside entry bodies (builtinsOutside)
	checked     bool     // compiled for the checker (check)
	noRegions   bool     // plan runs barrier entries as fibers, never regions (check)
	keepAtomics bool     // regions keep shared-memory atomics atomic (racecheck must see them as atomics)
	rewritten   string   // the source with bodies and shared rewritten, line numbers unchanged
	src         string   // the source scanned: the user's, or it with helpers inlined (inline.go)
	orig        string   // the user's source when src inlined helpers ("" otherwise)
	live        map[int]bool
}

// runMode is how an entry's threads run.
type runMode uint8

const (
	modeLoop    runMode = iota // no barrier: one loop over the blocks and their threads
	modeRegions                // barriers: loops over the threads between them (regions.go)
	modeFiber                  // one fiber per thread, switched at barriers and warp functions
)

// entry is one kernel entry point: Name is what hipModuleGetFunction looks up, Ref how the
// generated launcher names the function (qualified when it sits in a namespace).
type entry struct{ Name, Ref string }

// body is an entry's definition: its name, parameter names and braces (byte offsets and
// token indices), how many index-variable names (threadIdx, hipThreadIdx_x, ...) it holds,
// whether it names a barrier or a warp function, and how it runs (why: why it runs as
// fibers, for the debug log).
type body struct {
	name              string
	params            []string
	open, close       int
	openTok, closeTok int
	builtins          int
	sync, warp        bool
	mode              runMode
	why               string
}

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
func scan(src string) *program { return scanLive(src, nil, false) }

// scanLive is scan taking only what sits on live lines (1-based; nil = every line): the
// lines the preprocessor kept, so a kernel in a disabled #if block is not an entry. With
// regions on, shuffle helpers are inlined into the entries first (inline.go), when that
// lets an entry run as regions. With cxx, the bodies of C++-linkage and template
// __global__ definitions are wrapped as the entries' are, for the launchers of the
// program's name expressions (names.go); they are still not entries by their own name.
func scanLive(src string, live map[int]bool, cxx bool) *program {
	why := ""
	if regionsEnabled() {
		var in string
		if in, why = inlineHelpers(src); in != src {
			if p := scanSource(in, live, cxx); p.regions() {
				p.orig = src
				return p
			}
		}
	}
	p := scanSource(src, live, cxx)
	if why != "" {
		// A shuffle left in a helper is why the entries run as fibers: say why it stayed.
		for i := range p.bodies {
			if b := &p.bodies[i]; b.mode == modeFiber && strings.HasSuffix(b.why, "outside the entries' bodies") {
				b.why += " (" + why + ")"
			}
		}
	}
	return p
}

// scanSource scans src as it is.
func scanSource(src string, live map[int]bool, cxx bool) *program {
	toks := tokenize(src)
	p := &program{src: src, live: live, cxx: cxx}
	lines := newLineIndex(src)
	alive := func(tok token) bool { return live == nil || live[lines.of(tok.start)] }
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
		case warpNames[t.text]:
			p.warps = true
		case t.text == "HIP_DYNAMIC_SHARED" || t.text == "cubehip_dyn_shared":
			p.dynShared = true
		case t.text == "extern" && i+1 < len(toks) && toks[i+1].text != `"C"` && alive(t):
			if d, ok := sharedDecl(toks, i, inFunction()); ok {
				p.shared = append(p.shared, d)
				p.dynShared = true
			}
		case t.text == "__global__" && !inFunction():
			at, ok := kernelName(toks, i)
			if !ok || !alive(toks[at]) {
				continue
			}
			isEntry := externC() || declaredExternC(toks, i)
			if !isEntry && !cxx {
				continue
			}
			// Only a definition is an entry: the launcher relies on the body being wrapped
			// in the thread loop, so a kernel whose body the scan cannot see (a macro) is
			// not offered rather than run wrongly.
			b, ok := kernelBody(toks, at)
			if !ok {
				continue
			}
			p.bodies = append(p.bodies, b)
			if name := toks[at].text; isEntry && !seen[name] {
				seen[name] = true
				p.entries = append(p.entries, entry{Name: name, Ref: qualify(stack, name)})
			}
		}
	}
	// A macro may hide a barrier or a warp function from the tokens above (a
	// #define'd WARP_SYNC): the directives' words count too.
	for _, w := range directiveWords(src) {
		p.barrier = p.barrier || w == "__syncthreads" || strings.HasPrefix(w, "__syncthreads_")
		p.warps = p.warps || warpNames[w]
	}
	p.barrier = p.barrier || p.warps
	p.tlsBuiltins = builtinsOutside(src, p.bodies)
	p.plan(src, toks, hidden(src, toks, p.bodies))
	return p
}

// hidden says why the source's barriers or warp functions may be out of the jit's sight
// (in a __device__ function or a macro), "" when every one sits in an entry body.
func hidden(src string, toks []token, bodies []body) string {
	in := map[int]bool{}
	for _, b := range bodies {
		for i := b.openTok; i <= b.closeTok; i++ {
			in[i] = true
		}
	}
	for i, t := range toks {
		if !in[i] && (t.text == "__syncthreads" || strings.HasPrefix(t.text, "__syncthreads_") || warpNames[t.text]) {
			return t.text + " outside the entries' bodies"
		}
	}
	for _, w := range directiveWords(src) {
		if w == "__syncthreads" || strings.HasPrefix(w, "__syncthreads_") || warpNames[w] {
			return w + " in a macro"
		}
	}
	return ""
}

// plan decides how each entry runs and rewrites the source for it: entries without
// barriers or warp functions as loops; the others as regions where formRegions can,
// else as fibers. Every entry runs as fibers when a barrier or a warp function is
// hidden (why): in a __device__ function any entry may call, a macro or a header.
func (p *program) plan(src string, toks []token, why string) {
	var edits []edit
	regions := regionsEnabled() && !p.noRegions
	macros := pureMacros(src)
	regionEdits := make([][]edit, len(p.bodies))
	for i := range p.bodies {
		b := &p.bodies[i]
		switch {
		case why != "":
			b.mode, b.why = modeFiber, why
		case !b.sync && !b.warp:
			b.mode = modeLoop
		case !regions:
			b.mode, b.why = modeFiber, "CUBEHIP_CPU_REGIONS=0"
			if p.noRegions {
				b.why = "a checked module runs its barriers as fibers"
			}
		default:
			e, reason := formRegions(src, toks, b.openTok, b.closeTok, b.params, macros, p.keepAtomics)
			if reason == "" {
				b.mode, regionEdits[i] = modeRegions, e
				continue
			}
			b.mode, b.why = modeFiber, reason
		}
	}
	unifyModes(p.bodies)
	for i := range p.bodies {
		b := &p.bodies[i]
		if b.mode == modeRegions {
			edits = append(edits, regionEdits[i]...)
			continue
		}
		begin, end := "{ CUBEHIP_THREADS_BEGIN ", " CUBEHIP_THREADS_END }"
		if b.mode == modeFiber {
			end = " CUBEHIP_FIBER_END }"
		} else if c := indexOffset(toks, b.openTok+1, b.closeTok); c != 0 {
			begin = "{ CUBEHIP_THREADS_BEGIN_AT(" + strconv.Itoa(c) + ") "
		}
		edits = append(edits, edit{b.open, b.open + 1, begin}, edit{b.close, b.close + 1, end})
	}
	for _, d := range p.shared {
		text := d.typ + "* const " + d.name + " = reinterpret_cast<" + d.typ + "*>(cubehip_dyn_shared);"
		if !d.block {
			// The buffer moves with each launch's dynamic size: read at each use.
			text = "static const ::cubehip::dyn_ptr<" + d.typ + "> " + d.name + "{};"
		}
		edits = append(edits, edit{d.start, d.end, text + strings.Repeat("\n", strings.Count(src[d.start:d.end], "\n"))})
	}
	edits = append(edits, sharedEdits(src, toks, p.bodies)...)
	p.rewritten = applyEdits(src, edits)
	// Warp functions and cooperative groups read the running thread's index and wait at
	// barriers from the prelude's code: a module whose warp functions run as fibers keeps
	// the thread-local index current. (Regions rewrite their shuffles and need none.)
	p.tlsBuiltins = p.tlsBuiltins || p.warps && p.fibers()
}

// unifyModes runs every body of a name as fibers when one of them does: a launcher
// knows its kernel by name only (the name expression's, names.go; an entry's), and a
// launcher of one mode runs a body wrapped for the other wrongly. Bodies share a name
// where a template has specializations or a kernel overloads; a fiber runs any body
// correctly, only slower.
func unifyModes(bodies []body) {
	fiber := map[string]string{}
	for _, b := range bodies {
		if _, ok := fiber[b.name]; !ok && b.mode == modeFiber {
			fiber[b.name] = b.why
		}
	}
	for i := range bodies {
		if why, ok := fiber[bodies[i].name]; ok && bodies[i].mode != modeFiber {
			bodies[i].mode, bodies[i].why = modeFiber, "another kernel named "+bodies[i].name+" runs as fibers: "+why
		}
	}
}

// withHeaders replans every entry as fibers when an in-memory header names a barrier or
// a warp function: a __device__ function there may hold it.
func (p *program) withHeaders(headers []header) {
	for _, h := range headers {
		if strings.Contains(h.source, "__syncthreads") || namesWarp(h.source) {
			p.fallBack("a barrier or warp function in header " + h.name)
			return
		}
	}
}

// fallBack runs every entry that is not a plain loop as fibers, for the reason why, from
// the user's own source (helpers no longer inlined). What the headers and options added
// to the modes is kept.
func (p *program) fallBack(why string) {
	if !p.regions() {
		return
	}
	p.rescan()
	p.plan(p.src, tokenize(p.src), why)
}

// rescan scans the user's own source again (helpers no longer inlined), for plan to run
// over, keeping what the headers and options added to the modes.
func (p *program) rescan() {
	if p.orig == "" {
		return
	}
	q := scanSource(p.orig, p.live, p.cxx)
	q.exprs = p.exprs
	q.barrier = q.barrier || p.barrier
	q.warps = q.warps || p.warps
	q.tlsBuiltins = q.tlsBuiltins || p.tlsBuiltins
	*p = *q
}

// regions reports whether any entry runs as regions.
func (p *program) regions() bool {
	for _, b := range p.bodies {
		if b.mode == modeRegions {
			return true
		}
	}
	return false
}

// logModes logs, at debug level, each entry with barriers that runs as fibers and why.
func (p *program) logModes(file string) {
	for _, b := range p.bodies {
		if b.mode == modeFiber {
			debugLog().Debug("cpu jit: kernel runs as one fiber per thread", "kernel", b.name, "file", file, "why", b.why)
		}
	}
}

// fibers reports whether any entry runs as fibers (its launches need fiber stacks).
func (p *program) fibers() bool {
	for _, b := range p.bodies {
		if b.mode == modeFiber {
			return true
		}
	}
	return false
}

// pureMacros are the source's object-like and function-like macros whose definitions
// name no thread index and call nothing but other such macros and arithmetic: the same
// for every thread, as a constant is.
func pureMacros(src string) map[string]bool {
	defs := map[string][]token{}
	for _, line := range strings.Split(src, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(strings.TrimSpace(rest), "define")
		if !ok {
			continue
		}
		ts := tokenize(rest)
		if len(ts) > 0 && ts[0].kind == 'i' {
			defs[ts[0].text] = ts[1:]
		}
	}
	pure := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, body := range defs {
			if pure[name] {
				continue
			}
			ok := true
			for i, t := range body {
				call := i+1 < len(body) && body[i+1].text == "("
				if t.kind == 'i' && (threadNames[t.text] || call && !pureWords[t.text] && !pure[t.text] && !(i == 0 || body[i-1].text == "(")) {
					ok = false
				}
				if t.kind == 'i' && !call && !pureWords[t.text] && !pure[t.text] && !uniformNames[t.text] && !(t.text[0] >= '0' && t.text[0] <= '9') && !macroParam(body, t.text) {
					ok = false
				}
			}
			if ok {
				pure[name], changed = true, true
			}
		}
	}
	return pure
}

// macroParam reports whether name is a parameter of a function-like macro whose tokens
// after its name are body: (a, b) at its start.
func macroParam(body []token, name string) bool {
	if len(body) == 0 || body[0].text != "(" {
		return false
	}
	for _, t := range body[1:] {
		if t.text == ")" {
			return false
		}
		if t.text == name {
			return true
		}
	}
	return false
}

// warpNames are the functions (and cooperative groups' names, whose members call them
// and __syncthreads from a header) that make a module's threads run as warps.
var warpNames = map[string]bool{
	"__shfl": true, "__shfl_up": true, "__shfl_down": true, "__shfl_xor": true,
	"__shfl_sync": true, "__shfl_up_sync": true, "__shfl_down_sync": true, "__shfl_xor_sync": true,
	"__ballot": true, "__ballot_sync": true, "__any": true, "__all": true, "__any_sync": true, "__all_sync": true,
	"__uni_sync": true, "__activemask": true, "__syncwarp": true, "__lane_id": true,
	"__reduce_add_sync": true, "__reduce_min_sync": true, "__reduce_max_sync": true,
	"__reduce_and_sync": true, "__reduce_or_sync": true, "__reduce_xor_sync": true,
	"__match_any_sync": true, "__match_all_sync": true,
	"cooperative_groups": true, "tiled_partition": true, "thread_block_tile": true, "this_thread_block": true,
	"this_grid": true, "grid_group": true, "coalesced_threads": true, "coalesced_group": true, "binary_partition": true,
}

// directiveWords are the identifiers on the source's preprocessor lines (with their
// continuations), which tokenize leaves out.
func directiveWords(src string) []string {
	var words []string
	lineStart := true
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' {
			lineStart = true
			continue
		}
		if c == ' ' || c == '\t' {
			continue
		}
		if !(lineStart && c == '#') {
			lineStart = false
			continue
		}
		lineStart = false
		j := i
		for j < len(src) && src[j] != '\n' {
			if src[j] == '\\' && j+1 < len(src) && src[j+1] == '\n' {
				j++
			}
			j++
		}
		for _, t := range tokenize(src[i+1 : j]) {
			if t.kind == 'i' {
				words = append(words, t.text)
			}
		}
		i = j - 1
	}
	return words
}

// namesWarp reports whether text names a warp function anywhere (an in-memory header).
func namesWarp(text string) bool {
	for _, t := range tokenize(text) {
		if t.kind == 'i' && warpNames[t.text] {
			return true
		}
	}
	return false
}

// lineIndex holds the byte offset at which each line of a source starts.
type lineIndex []int

func newLineIndex(src string) lineIndex {
	idx := lineIndex{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

// of returns the 1-based line holding byte offset off.
func (l lineIndex) of(off int) int { return sort.SearchInts(l, off+1) }

// builtinNames are the index variables and HIP's macros for them; a name is counted by
// prefix, so hipThreadIdx counts hipThreadIdx_x.
var builtinNames = []string{"threadIdx", "blockIdx", "blockDim", "gridDim", "hipThreadIdx", "hipBlockIdx", "hipBlockDim", "hipGridDim"}

func isBuiltin(tok string) bool {
	for _, n := range builtinNames {
		if strings.HasPrefix(tok, n) {
			return true
		}
	}
	return false
}

// builtinsOutside reports whether the source names an index variable anywhere but inside
// an entry body (a __device__ helper, a macro, a comment): those places read the
// thread-local copies, which the runner must then keep current at every thread. Counting
// raw text against body tokens errs on the safe side.
func builtinsOutside(src string, bodies []body) bool {
	raw := 0
	for _, n := range builtinNames {
		raw += strings.Count(src, n)
	}
	inside := 0
	for _, b := range bodies {
		inside += b.builtins
	}
	return raw > inside
}

// kernelBody finds the braces of the function whose name is toks[at]: past its parameter
// list and any trailing attributes, a "{" (a definition) rather than a ";".
func kernelBody(toks []token, at int) (body, bool) {
	lp := at + 1 // the parameter list's "(", after an explicit specialization's <...>
	if lp < len(toks) && toks[lp].text == "<" {
		lp = skipAngles(toks, lp)
	}
	i := skipParens(toks, lp)
	for i < len(toks) && toks[i].text != "{" {
		switch {
		case toks[i].text == ";":
			return body{}, false
		case attributes[toks[i].text] && i+1 < len(toks) && toks[i+1].text == "(":
			i = skipParens(toks, i+1)
		default:
			i++
		}
	}
	if i >= len(toks) {
		return body{}, false
	}
	b := body{name: toks[at].text, params: paramNames(toks, lp), open: toks[i].start, openTok: i}
	depth := 0
	for ; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.text == "{":
			depth++
		case t.text == "}":
			depth--
			if depth == 0 {
				b.close, b.closeTok = t.start, i
				return b, true
			}
		case t.kind == 'i' && isBuiltin(t.text):
			b.builtins++
		case t.text == "__syncthreads" || strings.HasPrefix(t.text, "__syncthreads_"):
			b.sync = true
		case warpNames[t.text]:
			b.warp = true
		}
	}
	return body{}, false
}

// paramNames are the names of the parameters in the list whose ( is toks[open]: the last
// word of each, before any array brackets.
func paramNames(toks []token, open int) []string {
	var names []string
	last := ""
	depth := 0
	for i := open; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.text == "(" || t.text == "[" || t.text == "<":
			depth++
		case t.text == ")" || t.text == "]" || t.text == ">":
			depth--
			if depth == 0 {
				if last != "" {
					names = append(names, last)
				}
				return names
			}
		case t.text == "," && depth == 1:
			names = append(names, last)
			last = ""
		case t.kind == 'i' && depth == 1:
			last = t.text
		}
	}
	return names
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

// kernelName finds the name declared by the __global__ at toks[at] and returns its
// index: the first identifier followed by "(" (or by template arguments and "(") that is
// not an attribute
// (__launch_bounds__ may come before or after __global__, and the return type between).
func kernelName(toks []token, at int) (int, bool) {
	for i := at + 1; i+1 < len(toks); {
		t := toks[i]
		switch {
		case t.kind == 'i' && attributes[t.text] && toks[i+1].text == "(":
			i = skipParens(toks, i+1)
		case t.kind == 'i' && toks[i+1].text == "(":
			return i, true
		case t.kind == 'i' && toks[i+1].text == "<":
			// An explicit specialization names its arguments before the parameters
			// (`k<int>(`); a templated return type does not.
			j := skipAngles(toks, i+1)
			if j < len(toks) && toks[j].text == "(" {
				return i, true
			}
			i = j
		case t.text == ";" || t.text == "{" || t.text == "(":
			return 0, false
		default:
			i++
		}
	}
	return 0, false
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

// sharedDecl parses `extern __shared__ <type> name[];` starting at toks[at], with
// __shared__ anywhere among the specifiers (`extern float __shared__ s[];`, the order
// NVIDIA's samples write it in, is the same declaration); an extern that is not a
// dynamic shared array is no match. Alignment attributes are dropped from the type: the
// buffer is 64-byte aligned already.
func sharedDecl(toks []token, at int, block bool) (shared, bool) {
	end, isShared := at, false
	for end < len(toks) && toks[end].text != ";" {
		switch toks[end].text {
		case "__shared__":
			isShared = true
		case "{", "}", "=":
			return shared{}, false
		}
		end++
	}
	// ... name [ ] ;
	if !isShared || end >= len(toks) || end-at < 6 || toks[end-1].text != "]" || toks[end-2].text != "[" || toks[end-3].kind != 'i' {
		return shared{}, false
	}
	var typ []string
	for i := at + 1; i < end-3; {
		if attributes[toks[i].text] && i+1 < len(toks) && toks[i+1].text == "(" {
			i = skipParens(toks, i+1)
			continue
		}
		if toks[i].text != "__shared__" {
			typ = append(typ, toks[i].text)
		}
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

// applyEdits applies the edits to src: the thread loop or regions around each entry body
// (cubehip_entry.h, cubehip_regions.h), each `extern __shared__ T a[];` turned into a
// pointer to the running block's dynamic shared buffer (in its OS thread's shared arena,
// cubehip_shared.h; at namespace scope an object that reads it at each use, in a
// function a local), and each static __shared__ declaration into references into the
// arena (sharedmem.go). Only insertions on existing lines
// and newline-preserving replacements: compiler messages keep the user's line numbers.
// Inserts at one place apply in the order they were made, before a replacement there.
func applyEdits(src string, edits []edit) string {
	if len(edits) == 0 {
		return src
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end == edits[i].start && edits[j].end != edits[j].start
	})
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if e.start < last { // overlapping (cannot happen for well-formed input): skip
			continue
		}
		b.WriteString(src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(src[last:])
	return b.String()
}

// check makes the program a checked one (check.go): under racecheck or synccheck, entries
// with warp functions run as fibers, whose meetings are real; the thread-local threadIdx
// is kept current in every entry, for the reports to name the thread; the tail records
// each entry's parameter names.
func (p *program) check(checks hipsys.Checks) {
	// Regions keep the thread-local threadIdx current as fibers do, and run a block's
	// accesses as its threads would: memcheck and initcheck judge them as well there.
	// A region's barrier is where one thread loop ends and the next begins, and it calls
	// the checker there (CUBEHIP_REGION_BARRIER): racecheck's next generation, and
	// synccheck's threads that returned while the others go on to it. A barrier behind a
	// thread-dependent condition never forms regions (regions.go), so no other synccheck
	// finding can arise in them. Warp functions meet per warp, which only fibers show the
	// checker. Under racecheck an atomic on shared memory stays atomic (regions make it a
	// plain update otherwise), or it would race with itself.
	fibers := checks&(hipsys.CheckRace|hipsys.CheckSync) != 0 && p.warps
	atomics := checks&hipsys.CheckRace != 0
	if p.regions() && (fibers || atomics) {
		// Planned again from the user's own source, as fallBack does.
		p.rescan()
		p.noRegions, p.keepAtomics = fibers, atomics
		p.plan(p.src, tokenize(p.src), "")
	}
	p.noRegions, p.keepAtomics = fibers, atomics
	// Only the access checks' judge reads the thread-local index of the thread it is
	// called from; synccheck's findings name their threads from the barrier's own records
	// (check_generation, check_region_barrier), so a module checked for it alone keeps its
	// thread loops as they are unchecked (vectorized where they were).
	p.checked = true
	p.tlsBuiltins = p.tlsBuiltins || checks&^hipsys.CheckSync != 0
}

// tail is the generated end of the translation unit: a launcher and a signature function
// per entry (CUBEHIP_ENTRY, cubehip_entry.h).
func (p *program) tail() string {
	var b strings.Builder
	b.WriteString("\n#line 1 \"<cubehip entries>\"\n")
	fiber := map[string]bool{}
	for _, bd := range p.bodies {
		fiber[bd.name] = fiber[bd.name] || bd.mode == modeFiber
	}
	for _, e := range p.entries {
		mode := "loop"
		if fiber[e.Name] {
			mode = "fiber"
		}
		b.WriteString("CUBEHIP_ENTRY(" + e.Name + ", " + e.Ref + ", " + mode + ")\n")
		if p.checked {
			for _, bd := range p.bodies {
				if bd.name == e.Name {
					b.WriteString("CUBEHIP_EXPORT const char cubehip_pnames_" + e.Name + "[] = \"" + strings.Join(bd.params, ",") + "\";\n")
					break
				}
			}
		}
	}
	b.WriteString(p.namedTail(fiber))
	return b.String()
}
