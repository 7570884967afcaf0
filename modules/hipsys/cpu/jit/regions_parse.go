package jit

// Region formation, phase 1: parsing the entry body into statements.
//
// Invariants:
//   - A statement is a range of token indices [first, last] into the body's tokens, with
//     the indices of its header's parentheses and its sub-statements; nothing is copied,
//     so every later phase edits the original source at the tokens' offsets.
//   - Each statement records whether it holds a barrier or a warp shuffle at any depth
//     (sync, shfl), so the rewrite decides between a region and block level from the
//     statement alone.
//   - A construct the parser does not know fails the whole body (regionForm.fail): there
//     is no partial tree, and the kernel runs as fibers.
//   - declared runs once, before the rewrite, and records every name the body declares
//     at any depth: a later phase tells a local from a parameter, a macro or a global by
//     that set, never by where it stands.

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
