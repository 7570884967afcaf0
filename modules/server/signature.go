package server

import (
	"regexp"
	"strconv"
	"strings"
)

// cType is a HIP scalar type a kernel parameter can be declared with, as far as the
// launch needs to know it: what a Go value passed there is converted to.
type cType uint8

const (
	cUnknown cType = iota // a struct, a vector type, a typedef or template parameter
	cI8
	cU8
	cI16
	cU16
	cI32
	cU32
	cI64
	cU64
	cF32
	cF64
	cBool
	// Pointees only (no Go value converts to them): HIP's 16-bit floating-point types,
	// whose bits a Go program holds in a []uint16.
	cF16
	cBF16
)

// cTypes are the spellings of each scalar type after qualifiers are dropped: the C
// names, the fixed-width ones and HIP's short names. long is 64 bits, as on every host
// and device cubehip runs on (LP64).
var cTypes = map[string]cType{}

func init() {
	for t, names := range map[cType][]string{
		cI8:   {"char", "signed char", "int8_t"},
		cU8:   {"unsigned char", "uint8_t", "uchar"},
		cI16:  {"short", "short int", "signed short", "signed short int", "int16_t"},
		cU16:  {"unsigned short", "unsigned short int", "uint16_t", "ushort"},
		cI32:  {"int", "signed", "signed int", "int32_t"},
		cU32:  {"unsigned", "unsigned int", "uint32_t", "uint"},
		cI64:  {"long", "long int", "long long", "long long int", "signed long", "signed long long", "int64_t", "ssize_t", "ptrdiff_t", "intptr_t"},
		cU64:  {"unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int", "uint64_t", "size_t", "uintptr_t", "ulong", "ullong"},
		cF32:  {"float"},
		cF64:  {"double"},
		cBool: {"bool"},
	} {
		for _, n := range names {
			cTypes[n] = t
		}
	}
}

// vectorComponents are HIP's vector types' component types (float4 is four floats): a
// pointer to one takes a buffer of its components.
var vectorComponents = map[string]cType{
	"char": cI8, "uchar": cU8, "short": cI16, "ushort": cU16, "int": cI32, "uint": cU32,
	"long": cI64, "ulong": cU64, "longlong": cI64, "ulonglong": cU64, "float": cF32, "double": cF64,
}

// halfTypes are the spellings of the 16-bit floating-point types.
var halfTypes = map[string]cType{
	"__half": cF16, "half": cF16, "_Float16": cF16,
	"__hip_bfloat16": cBF16, "hip_bfloat16": cBF16, "__nv_bfloat16": cBF16, "__bf16": cBF16,
	"__half2": cF16, "half2": cF16, "__hip_bfloat162": cBF16, "__nv_bfloat162": cBF16,
}

// pointee is the element type of a pointer declared to typ: a scalar type, a vector
// type's component, a 16-bit float; and for a pointer to pointers (indirect), an
// address, which a buffer of 64-bit integers holds. cUnknown where the declaration
// cannot say (a struct, a typedef, a template parameter): any buffer goes.
func pointee(typ string, indirect bool) cType {
	if indirect {
		return cU64
	}
	if t, ok := cTypes[typ]; ok {
		return t
	}
	if t, ok := halfTypes[typ]; ok {
		return t
	}
	if n := len(typ); n > 1 && typ[n-1] >= '1' && typ[n-1] <= '4' {
		if t, ok := vectorComponents[typ[:n-1]]; ok {
			return t
		}
	}
	switch typ {
	case "hipFloatComplex", "cuFloatComplex", "hipComplex", "cuComplex":
		return cF32
	case "hipDoubleComplex", "cuDoubleComplex":
		return cF64
	}
	return cUnknown
}

// sigParam is one parameter of a kernel as its source declares it.
type sigParam struct {
	text     string // the declaration as written, "const float* x"
	name     string // "" where the declaration has none
	ctype    cType  // a value's scalar type (cUnknown for a pointer)
	elem     cType  // a pointer's element type, where it is a scalar type
	pointer  bool   // a pointer or array: a buffer goes there
	readOnly bool   // a pointer to const: the kernel only reads the buffer
}

// label is how an error names the parameter: "argument 1 (a)".
func (p *sigParam) label(i int) string {
	if p != nil && p.name != "" {
		return "argument " + strconv.Itoa(i) + " (" + p.name + ")"
	}
	return "argument " + strconv.Itoa(i)
}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	identifier   = regexp.MustCompile(`[A-Za-z_]\w*`)
	constWord    = regexp.MustCompile(`\bconst\b`)
)

// qualifiers are the words of a declaration that say nothing about its type's width or
// the parameter's name.
var qualifiers = map[string]bool{
	"const": true, "volatile": true, "__restrict__": true, "__restrict": true, "restrict": true,
	"struct": true, "register": true, "std": true,
}

// parseSignature reads the parameters of the `__global__` function entry from source,
// as the Python package does: ok is false where the declaration cannot be read (built by
// a macro, say), and then the launch goes by what the platform reports.
func parseSignature(source, entry string) (params []sigParam, ok bool) {
	if entry == "" || !identifier.MatchString(entry) {
		return nil, false
	}
	src := lineComment.ReplaceAllString(blockComment.ReplaceAllString(source, " "), " ")
	call := regexp.MustCompile(`\b` + regexp.QuoteMeta(entry) + `\s*\(`)
	for _, m := range call.FindAllStringIndex(src, -1) {
		// Only the declaration whose own text (since the statement before it) says
		// __global__: a call of entry, or a host function of that name, is not it.
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
		if depth != 0 {
			return nil, false
		}
		inner := strings.TrimSpace(src[m[1] : i-1])
		if inner == "" || inner == "void" {
			return []sigParam{}, true
		}
		for _, text := range splitTop(inner) {
			params = append(params, parseParam(strings.TrimSpace(text)))
		}
		return params, true
	}
	return nil, false
}

// splitTop splits a parameter list at the commas outside brackets (a template
// argument list holds commas of its own).
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(', '<', '[', '{':
			depth++
		case ')', '>', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func parseParam(text string) sigParam {
	p := sigParam{text: text}
	decl, _, _ := strings.Cut(text, "=") // a default argument
	if star := strings.IndexAny(decl, "*["); star >= 0 {
		p.pointer = true
		p.readOnly = constWord.MatchString(decl[:star])
		// The name follows the last '*' ("float* __restrict__ y") or comes before the
		// '[' ("float y[]").
		var words []string
		if last := strings.LastIndexByte(decl, '*'); last >= 0 {
			words = names(decl[last:])
		} else if ws := names(decl[:star]); len(ws) > 1 {
			words = ws
		}
		if len(words) > 0 {
			p.name = words[len(words)-1]
		}
		typ := names(decl[:star])
		if !strings.Contains(decl, "*") && len(typ) > 1 {
			typ = typ[:len(typ)-1] // "float y[]": y is the name
		}
		// float** p, float* p[]: a pointer to pointers.
		indirect := strings.Count(decl, "*")+strings.Count(decl, "[") > 1
		p.elem = pointee(strings.Join(typ, " "), indirect)
		return p
	}
	if strings.Contains(decl, "&") { // a reference: not a HIP kernel's, left to the platform
		if ws := names(decl); len(ws) > 0 {
			p.name = ws[len(ws)-1]
		}
		return p
	}
	words := names(decl)
	if len(words) > 1 {
		if _, typeOnly := cTypes[strings.Join(words, " ")]; !typeOnly {
			p.name, words = words[len(words)-1], words[:len(words)-1]
		}
	}
	p.ctype = cTypes[strings.Join(words, " ")]
	return p
}

// names are the identifiers of a declaration, qualifiers left out.
func names(s string) []string {
	var out []string
	for _, w := range identifier.FindAllString(s, -1) {
		if !qualifiers[w] {
			out = append(out, w)
		}
	}
	return out
}

// inferIO is the access of each pointer parameter as its declaration says it: a
// pointer to const is only read, any other pointer is read and written: the kernel may
// read what it writes (y[i] += ...), so a failure that buffer carries must stop the
// launch, as a Read input's does.
func inferIO(params []sigParam) []Access {
	io := []Access{}
	for _, p := range params {
		switch {
		case !p.pointer:
		case p.readOnly:
			io = append(io, Read)
		default:
			io = append(io, ReadWrite)
		}
	}
	return io
}

var cNames = [...]string{
	cUnknown: "", cI8: "char", cU8: "unsigned char", cI16: "short", cU16: "unsigned short",
	cI32: "int", cU32: "unsigned int", cI64: "long long", cU64: "unsigned long long",
	cF32: "float", cF64: "double", cBool: "bool", cF16: "__half", cBF16: "__hip_bfloat16",
}

// goNames are the Go types of the same layout as each scalar type.
var goNames = [...]string{
	cUnknown: "unknown", cI8: "int8", cU8: "uint8", cI16: "int16", cU16: "uint16",
	cI32: "int32", cU32: "uint32", cI64: "int64", cU64: "uint64",
	cF32: "float32", cF64: "float64", cBool: "bool", cF16: "uint16 (half bits)", cBF16: "uint16 (bfloat16 bits)",
}

// aliases reports whether a kernel's pointer to elem may take a buffer made for
// elements of type held (AllocSlice, UploadSlice): where either is unknown, where the
// kernel reads bytes (char*: any buffer is bytes), and where the two are the same
// width and both integers or both floating point (int* over []uint32 is as C++ allows).
// A float* over []int32 or a double* over []float32 is a mistake the launch catches. A
// 16-bit float takes 16-bit integers: Go has no such float, and holds its bits so.
func aliases(elem, held cType) bool {
	if elem == cUnknown || held == cUnknown || cSizes[elem] == 1 {
		return true
	}
	if elem == cF16 || elem == cBF16 {
		return held == cU16 || held == cI16
	}
	float := func(t cType) bool { return t == cF32 || t == cF64 }
	return cSizes[elem] == cSizes[held] && float(elem) == float(held)
}
