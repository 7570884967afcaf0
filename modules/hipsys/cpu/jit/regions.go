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
	why      string     // why the body cannot be transformed ("" while it can)
}

// formRegions returns the edits that turn the body (tokens between open and close, the
// braces' indices) into regions, or why it cannot.
func formRegions(src string, toks []token, open, close int, params []string, macros map[string]bool) ([]edit, string) {
	f := &regionForm{src: src, toks: toks, lo: open + 1, hi: close, params: map[string]bool{}, locals: map[string]bool{}, macros: macros, pred: -1}
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

// ---- parsing ----------------------------------------------------------------------

// parseSeq parses the statements in tokens [i, end).
func (f *regionForm) parseSeq(i, end int) ([]*stmt, bool) {
	var items []*stmt
	for i < end {
		s, next := f.parse(i, end)
		if s == nil {
			return nil, false
		}
		items = append(items, s)
		i = next
	}
	return items, true
}

// parse parses one statement starting at toks[i] (before end) and returns it and the index
// after it; nil when the statement is not one it knows.
func (f *regionForm) parse(i, end int) (*stmt, int) {
	toks := f.toks
	s := &stmt{first: i}
	header := func(at int) (int, bool) { // the ( ) at toks[at]
		if at >= end || toks[at].text != "(" {
			f.fail("unexpected %q at line %d", toks[min(at, end-1)].text, f.line(min(at, end-1)))
			return 0, false
		}
		s.open = at
		j := skipParens(toks, at)
		s.close = j - 1
		return j, j <= end
	}
	sub := func(at int) (*stmt, int) {
		if at >= end {
			f.fail("a statement missing at line %d", f.line(end-1))
			return nil, 0
		}
		return f.parse(at, end)
	}
	switch toks[i].text {
	case "{":
		close := matchBrace(toks, i)
		if close < 0 || close >= end {
			f.fail("unbalanced braces at line %d", f.line(i))
			return nil, 0
		}
		items, ok := f.parseSeq(i+1, close)
		if !ok {
			return nil, 0
		}
		s.kind, s.items, s.last = stCompound, items, close
	case "if", "for", "while", "switch":
		s.kind = map[string]stmtKind{"if": stIf, "for": stFor, "while": stWhile, "switch": stSwitch}[toks[i].text]
		at := i + 1
		if s.kind == stIf && at < end && toks[at].text == "constexpr" {
			at++
		}
		j, ok := header(at)
		if !ok {
			return nil, 0
		}
		body, next := sub(j)
		if body == nil {
			return nil, 0
		}
		s.body = body
		if s.kind == stIf && next < end && toks[next].text == "else" {
			if s.alt, next = sub(next + 1); s.alt == nil {
				return nil, 0
			}
		}
		s.last = next - 1
	case "do":
		body, next := sub(i + 1)
		if body == nil {
			return nil, 0
		}
		s.kind, s.body = stDo, body
		if next >= end || toks[next].text != "while" {
			f.fail("do without while at line %d", f.line(i))
			return nil, 0
		}
		j, ok := header(next + 1)
		if !ok || j >= end || toks[j].text != ";" {
			f.fail("do-while without ; at line %d", f.line(i))
			return nil, 0
		}
		s.last = j
	case ";":
		s.kind, s.last = stEmpty, i
	case "else":
		f.fail("else without if at line %d", f.line(i))
		return nil, 0
	default:
		j := i
		for depth := 0; j < end; j++ {
			t := toks[j].text
			if t == "(" || t == "[" || t == "{" {
				depth++
			} else if t == ")" || t == "]" || t == "}" {
				depth--
			} else if t == ";" && depth == 0 {
				break
			}
		}
		if j >= end {
			f.fail("a statement without ; at line %d", f.line(i))
			return nil, 0
		}
		s.kind, s.last = stSimple, j
		if j == i+3 && toks[i].text == "__syncthreads" && toks[i+1].text == "(" && toks[i+2].text == ")" {
			s.kind = stBarrier
		}
	}
	for k := s.first; k <= s.last; k++ {
		if toks[k].text == "__syncthreads" || shuffles[toks[k].text] {
			s.sync = true
			s.shfl = s.shfl || shuffles[toks[k].text]
		}
	}
	return s, s.last + 1
}

func matchBrace(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "{":
			depth++
		case "}":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// declared collects every name the statements declare, at any depth.
func (f *regionForm) declared(items []*stmt) {
	for _, s := range items {
		switch s.kind {
		case stSimple:
			if d, ok := f.declaration(s.first, s.last); ok {
				for _, dc := range d.decls {
					f.locals[f.toks[dc.name].text] = true
				}
			}
		case stCompound:
			f.declared(s.items)
		case stFor:
			for k := s.open + 1; k < s.close; k++ {
				if f.toks[k].text == ";" {
					if d, ok := f.declaration(s.open+1, k); ok {
						for _, dc := range d.decls {
							f.locals[f.toks[dc.name].text] = true
						}
					}
					break
				}
			}
		}
		for _, sub := range []*stmt{s.body, s.alt} {
			if sub != nil {
				f.declared([]*stmt{sub})
			}
		}
	}
}

// ---- the rewrite ------------------------------------------------------------------

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
				f.replace(s.first, s.last, f.closeText())
				closeRegion(k)
			} else {
				f.replace(s.first, s.last, "")
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
			if v := f.lookup(f.toks[k+3].text); v != nil && v.shared {
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
		f.replace(s.first, s.last, ";")
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

// declarator is one name a declaration statement declares: its token, its initializer
// [init, end) (init < 0 when it has none) and whether it is an array.
type declarator struct {
	name, init, end int
	array, direct   bool // T a[N]; T a(x) or T a{x}
}

type declaration struct {
	typeLo, typeHi int // the type's tokens
	decls          []declarator
	ref            bool // a reference type
	pointer        bool // a pointer type (of the first declarator)
}

// keywords start statements that are not declarations.
var keywords = map[string]bool{
	"return": true, "if": true, "else": true, "for": true, "while": true, "do": true, "switch": true, "case": true,
	"default": true, "break": true, "continue": true, "goto": true, "new": true, "delete": true, "sizeof": true,
	"throw": true, "this": true, "true": true, "false": true, "nullptr": true, "operator": true, "typedef": true, "using": true,
}

// declaration parses tokens [lo, hi) (a statement without its ;) as a simple
// declaration: a type (names, ::, *, &, template arguments), then declarators.
func (f *regionForm) declaration(lo, hi int) (declaration, bool) {
	toks := f.toks
	d := declaration{typeLo: lo}
	k := lo
	names := 0
	for k < hi {
		t := toks[k]
		switch {
		case t.kind == 'i' && !keywords[t.text] && !(t.text[0] >= '0' && t.text[0] <= '9'):
			// The declared name is the last word before =, [, (, {, , or the end.
			if names > 0 && k+1 <= hi && (k+1 == hi || strings.Contains("=[({,", toks[k+1].text)) && toks[k-1].text != ":" {
				d.typeHi = k
				return f.declarators(d, k, hi)
			}
			names++
			k++
		case t.text == "*" || t.text == "&":
			if names == 0 {
				return d, false
			}
			d.ref = d.ref || t.text == "&"
			d.pointer = d.pointer || t.text == "*"
			k++
		case t.text == ":" && k+1 < hi && toks[k+1].text == ":":
			k += 2
		case t.text == "<" && names > 0:
			depth := 0
			for ; k < hi; k++ {
				if toks[k].text == "<" {
					depth++
				} else if toks[k].text == ">" {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			k++
		default:
			return d, false
		}
	}
	return d, false
}

func (f *regionForm) declarators(d declaration, k, hi int) (declaration, bool) {
	toks := f.toks
	for k < hi {
		for k < hi && (toks[k].text == "*" || toks[k].text == "&") {
			d.ref = d.ref || toks[k].text == "&"
			k++
		}
		if k >= hi || toks[k].kind != 'i' {
			return d, false
		}
		dc := declarator{name: k, init: -1}
		k++
		for k < hi && toks[k].text == "[" {
			dc.array = true
			k = skipBrackets(toks, k)
		}
		if k < hi && (toks[k].text == "(" || toks[k].text == "{") {
			dc.direct = true
		}
		if k < hi && toks[k].text != "," {
			if toks[k].text == "=" {
				k++
			}
			dc.init = k
			for depth := 0; k < hi; k++ {
				t := toks[k].text
				if t == "(" || t == "[" || t == "{" {
					depth++
				} else if t == ")" || t == "]" || t == "}" {
					depth--
				} else if t == "," && depth == 0 {
					break
				}
			}
		}
		dc.end = k
		if dc.init >= 0 && dc.init >= dc.end {
			return d, false
		}
		d.decls = append(d.decls, dc)
		if k < hi {
			k++ // ,
		}
	}
	return d, len(d.decls) > 0
}

func skipBrackets(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "[":
			depth++
		case "]":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// endRegion finds the locals the region's statements declare that the rest of the
// sequence (up to closeTok) names: each is recomputed or given a slot.
func (f *regionForm) endRegion(items []*stmt, closeTok int) {
	if len(items) == 0 {
		return
	}
	after := items[len(items)-1].last + 1
	for _, s := range items {
		if s.kind != stSimple {
			continue
		}
		d, ok := f.declaration(s.first, s.last)
		if !ok {
			continue
		}
		var live []declarator
		for _, dc := range d.decls {
			if f.named(f.toks[dc.name].text, after, closeTok) {
				live = append(live, dc)
			}
		}
		if len(live) == 0 {
			continue
		}
		if f.recompute(s, d) {
			continue
		}
		name := f.toks[live[0].name].text
		switch {
		case len(d.decls) > 1:
			f.fail("%s lives across a barrier, declared with others at line %d", name, f.line(s.first))
		case d.ref:
			f.fail("reference %s lives across a barrier at line %d", name, f.line(s.first))
		case f.toks[d.typeLo].text == "auto" || f.toks[d.typeHi-1].text == "auto":
			f.fail("%s lives across a barrier, declared auto at line %d", name, f.line(s.first))
		case live[0].direct || live[0].array && live[0].init >= 0:
			f.fail("%s lives across a barrier, initialized in place at line %d", name, f.line(s.first))
		default:
			f.slotFor(s, d, live[0])
		}
		if f.why != "" {
			return
		}
	}
}

// named reports whether name occurs as a name in tokens [lo, hi).
func (f *regionForm) named(name string, lo, hi int) bool {
	for k := lo; k < hi; k++ {
		if f.toks[k].text == name && f.plain(k) {
			return true
		}
	}
	return false
}

// recompute makes every name of declaration d (statement s) a recomputed local, when none
// is assigned anywhere in the body and their values depend only on indices, parameters,
// constants and other recomputed locals.
func (f *regionForm) recompute(s *stmt, d declaration) bool {
	if d.ref {
		return false
	}
	// Each declarator may name the ones before it (`int t = threadIdx.x, lane = t % 32`):
	// they are in scope, as remat locals, while the later ones are checked; taken back
	// out if one fails.
	sc := &f.scopes[len(f.scopes)-1]
	before := len(*sc)
	decl := f.text(s.first, s.last)
	var vars []*regionVar
	varying := false
	for _, dc := range d.decls {
		if dc.init < 0 || dc.array || dc.direct {
			*sc = (*sc)[:before]
			return false
		}
		ok, v, _ := f.exprKind(dc.init, dc.end, true)
		if !ok || f.assigned(f.toks[dc.name].text, dc.name, d.pointer) {
			*sc = (*sc)[:before]
			return false
		}
		varying = varying || v
		rv := &regionVar{name: f.toks[dc.name].text, kind: varRemat, decl: decl, varying: v, tid: f.threadX(dc.init, dc.end)}
		vars = append(vars, rv)
		f.addVar(rv)
	}
	// The declaration is repeated whole: each of its names varies if any does.
	for _, rv := range vars {
		rv.varying = varying
	}
	return true
}

// slotFor gives the local a per-thread slot and turns its declaration into a reference
// to the thread's element.
func (f *regionForm) slotFor(s *stmt, d declaration, dc declarator) {
	name := f.toks[dc.name].text
	typ := "std::remove_cv_t<" + f.text(d.typeLo, d.typeHi-1) + ">"
	if dc.array {
		typ += f.text(dc.name+1, dc.end-1)
	}
	n := len(f.slots)
	f.slots = append(f.slots, typ)
	f.addVar(&regionVar{name: name, kind: varSlot, slot: n})
	ref := fmt.Sprintf("auto& %s = __cubehip_s%d[__cubehip_t];", name, n)
	if dc.init < 0 {
		f.replace(s.first, s.last, ref)
		return
	}
	// T name = init;  ->  auto& name = slot[t]; name = init;
	f.replace(s.first, dc.name, ref+" "+name)
}

// text is tokens [lo, hi] as one line: a space where the source had anything between two
// tokens (comments included), nothing where they touch.
func (f *regionForm) text(lo, hi int) string {
	var b strings.Builder
	for k := lo; k <= hi; k++ {
		if k > lo && f.toks[k].start > f.toks[k-1].end {
			b.WriteByte(' ')
		}
		b.WriteString(f.toks[k].text)
	}
	return b.String()
}

// modified reports whether the name at toks[k] is assigned there (=, op=, ++, --), has
// its address taken, or has a member assigned; subscript stores count only when it is
// not a pointer (a parameter or a pointer local stores to memory it points to).
func (f *regionForm) modified(k int, pointer bool) bool {
	toks := f.toks
	at := func(i int) string {
		if i < 0 || i >= len(toks) {
			return ""
		}
		return toks[i].text
	}
	touch := func(i int) bool { return i+1 < len(toks) && toks[i].end == toks[i+1].start }
	if k > 0 && (at(k-1) == "." || at(k-1) == ">" && at(k-2) == "-") {
		return false // a member of something else
	}
	assignAt := func(i int) bool {
		switch at(i) {
		case "=":
			return at(i+1) != "="
		case "+", "-", "*", "/", "%", "&", "|", "^":
			if at(i+1) == "=" && touch(i) {
				return true
			}
			return (at(i) == "+" || at(i) == "-") && at(i+1) == at(i) && touch(i)
		case "<", ">":
			return at(i+1) == at(i) && at(i+2) == "=" && touch(i) && touch(i+1)
		}
		return false
	}
	i := k + 1
	for at(i) == "." && k+2 < len(toks) { // v.x = ...
		i += 2
	}
	if at(i) == "[" && !pointer {
		i = skipBrackets(toks, i)
	}
	if assignAt(i) {
		return true
	}
	if (at(k-1) == "+" || at(k-1) == "-") && at(k-2) == at(k-1) && touch(k-2) {
		return true
	}
	if at(k-1) == "&" && at(k-2) != "&" {
		p := toks[max(k-2, 0)]
		if operand := p.kind == 'i' && !keywords[p.text] || p.text == ")" || p.text == "]"; operand {
			return false // a & b
		}
		// &p[i] or &p->x is the address of what a pointer points to, not of p.
		return !(pointer && (at(k+1) == "[" || at(k+1) == "-" && at(k+2) == ">"))
	}
	return false
}
