package server

import (
	"regexp"
	"strings"
)

// C++ entry points. An extern "C" kernel is found in its module by its name. Any other
// (a template's specialization, "reduce<float, 256>"; a C++-linkage kernel, "scale"; one
// overload of several, told apart by a cast) is found by the symbol the platform's
// compiler gives it when asked to resolve it as a name expression (hiprtc's and NVRTC's
// hiprtcAddNameExpression/hiprtcGetLoweredName; the cpu device's C++ compiler mangles it
// the same way), so its module is compiled with the expression.

var externCBlock = regexp.MustCompile(`extern\s+"C"\s*\{`)

// needsName reports whether entry must be resolved as a name expression to be found in
// source's module: it is not a plain identifier, or the source declares a __global__
// function of that name with C++ linkage. An identifier the source does not declare at
// all needs none: the module then reports it missing, naming the kernels it defines.
func needsName(source, entry string) bool {
	if !identifier.MatchString(entry) || identifier.FindString(entry) != entry {
		return true
	}
	src := lineComment.ReplaceAllString(blockComment.ReplaceAllString(source, " "), " ")
	at, head := globalDeclaration(src, entry)
	if at < 0 {
		return false
	}
	return !strings.Contains(head, `extern "C"`) && !insideExternC(src, at)
}

// globalDeclaration is the offset of the __global__ declaration of entry in src (comments
// removed) and the text before it back to the statement before it; -1 when none.
func globalDeclaration(src, entry string) (int, string) {
	call := regexp.MustCompile(`\b` + regexp.QuoteMeta(entry) + `\s*\(`)
	for _, m := range call.FindAllStringIndex(src, -1) {
		head := src[max(0, m[0]-400):m[0]]
		head = head[max(strings.LastIndexAny(head, ";}"), 0):]
		if strings.Contains(head, "__global__") {
			return m[0], head
		}
	}
	return -1, ""
}

// insideExternC reports whether offset at of src lies inside an extern "C" { ... } block.
func insideExternC(src string, at int) bool {
	for _, m := range externCBlock.FindAllStringIndex(src[:at], -1) {
		depth := 1
		for i := m[1]; i < len(src) && depth > 0; i++ {
			switch src[i] {
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth > 0 && i >= at {
				return true
			}
		}
	}
	return false
}

// declaredName is the function name a name expression names, for reading its
// declaration: "reduce<float, 256>" is reduce, "ns::scale" scale, a cast's operand its
// name; "" where it cannot tell.
func declaredName(expr string) string {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "(") { // a cast: (void(*)(float*))scale
		depth := 0
		for i, r := range e {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				e = strings.TrimSpace(e[i+1:])
				break
			}
		}
	}
	e = strings.TrimPrefix(e, "&")
	if i := strings.IndexByte(e, '<'); i >= 0 {
		e = e[:i]
	}
	if i := strings.LastIndex(e, "::"); i >= 0 {
		e = e[i+2:]
	}
	e = strings.TrimSpace(e)
	if identifier.FindString(e) != e {
		return ""
	}
	return e
}

// entrySignature is the parameters of the kernel entry names, as parseSignature reads
// them: an extern "C" or C++ name's declaration, a template's (its parameters of a
// template type then unknown), a cast's own parameter list for an overload it picks;
// not ok for an overloaded name without a cast (which overload is meant is the
// compiler's to say) or one it cannot read.
func entrySignature(source, entry string) ([]sigParam, bool) {
	if params, ok := castParams(entry); ok {
		return params, true
	}
	name := declaredName(entry)
	if name == "" {
		return nil, false
	}
	src := lineComment.ReplaceAllString(blockComment.ReplaceAllString(source, " "), " ")
	if overloaded(src, name) {
		return nil, false
	}
	return parseSignature(source, name)
}

// overloaded reports whether src declares __global__ functions named name with
// different parameter types.
func overloaded(src, name string) bool {
	call := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*\(`)
	var seen string
	for _, m := range call.FindAllStringIndex(src, -1) {
		head := src[max(0, m[0]-400):m[0]]
		head = head[max(strings.LastIndexAny(head, ";}"), 0):]
		if !strings.Contains(head, "__global__") {
			continue
		}
		depth, i := 1, m[1]
		for i < len(src) && depth > 0 {
			switch src[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			i++
		}
		var types []string
		for _, text := range splitTop(src[m[1] : i-1]) {
			p := parseParam(strings.TrimSpace(text))
			types = append(types, strings.Join(names(strings.TrimSuffix(p.text, p.name)), " "))
		}
		sig := strings.Join(types, ",")
		if seen != "" && sig != seen {
			return true
		}
		seen = sig
	}
	return false
}

// castParams reads the parameter list of a cast that picks an overload,
// "(void(*)(float*, int))twice": its types, without names.
func castParams(entry string) ([]sigParam, bool) {
	e := strings.TrimSpace(entry)
	if !strings.HasPrefix(e, "(") {
		return nil, false
	}
	depth, end := 0, -1
	for i, r := range e {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, false
	}
	cast := e[1:end] // void(*)(float*, int)
	open := strings.LastIndexByte(cast, '(')
	if open < 0 || !strings.HasSuffix(strings.TrimSpace(cast), ")") {
		return nil, false
	}
	inner := strings.TrimSpace(cast[open+1 : strings.LastIndexByte(cast, ')')])
	if inner == "" || inner == "void" {
		return []sigParam{}, true
	}
	var params []sigParam
	for _, text := range splitTop(inner) {
		params = append(params, parseParam(strings.TrimSpace(text)))
	}
	return params, true
}
