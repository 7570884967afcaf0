package jit

import (
	"fmt"
	"strings"
)

// Region formation, phase 3: declarations, what lives across a barrier, and slots.
//
// Invariants:
//   - When a region closes (endRegion), every local it declares that the rest of its
//     sequence names is either recomputed in each later region (never assigned, its value
//     depends only on indices, parameters, constants and other recomputed locals) or
//     kept in a per-thread slot; nothing declared in a region is read after it without
//     one of the two.
//   - A slot is an array of the declared type indexed by the thread's linear index, and
//     the declaration becomes a reference to the thread's element, so the body's own
//     statements read and write it unchanged.
//   - A declaration the rewrite cannot take apart (auto, several declarators, a
//     reference, in-place initialization) across a barrier fails the body.

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
