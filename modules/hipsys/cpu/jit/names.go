package jit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys/internal/lowered"
)

// Name expressions (hiprtcAddNameExpression / nvrtcAddNameExpression) on the cpu device.
//
// A name expression is a C++ expression designating a kernel: a template's specialization
// ("reduce<float, 256>"), a C++-linkage kernel ("scale"), one overload of several by a cast
// ("(void(*)(float*))scale"). The GPU compilers resolve it at the end of the translation
// unit and report the symbol it designates, its lowered (mangled) name, which the module
// then finds. Here the C++ compiler does the same, so the mangling is its own:
//
//   - the program's C++-linkage and template __global__ definitions are wrapped in the
//     thread loop as the extern "C" entries are (scanLive with cxx), so that any of their
//     instantiations runs as a kernel;
//   - after the source, each expression i binds a constant reference,
//     `static constexpr auto& __cubehip_ne_i = *(EXPR);`, which instantiates a template
//     (and fails the compile, with the compiler's words, for an expression that names
//     nothing or an overload set without a cast); a hidden pointer `cubehip_name_i` holds
//     its address; and when the expression names a kernel whose bodies the jit wrapped,
//     CUBEHIP_ENTRY generates its launcher, cubehip_run_<i>_expr (no extern "C" kernel's
//     launcher can have that name: a C++ identifier never starts with a digit);
//   - after the link, the object's relocations say which symbol each cubehip_name_i points
//     at (lowered.Resolve): its name is the expression's lowered name, and the module maps
//     it to the launcher (Module.Function).
//
// A launcher knows its kernel's run mode (a loop over threads, or fibers) from the kernel's
// name: every body of one name runs the same way (unifyModes).

// nameSuffix ends the launcher suffix of name expression i: "<i>_expr".
const nameSuffix = "_expr"

// namedTail is the generated code for the program's name expressions (see above), after
// the entries' launchers; fiber says which kernel names run as fibers.
func (p *program) namedTail(fiber map[string]bool) string {
	if len(p.exprs) == 0 {
		return ""
	}
	kernels := map[string]bool{}
	for _, b := range p.bodies {
		kernels[b.name] = true
	}
	var b strings.Builder
	for i, expr := range p.exprs {
		ref := "__cubehip_ne_" + strconv.Itoa(i)
		// The expression on a line of its own, under a file name that quotes it: a
		// compile error in it reads "name expression 'scale':1:...: error: ...".
		b.WriteString("#line 1 \"name expression '" + lineFileEscape(expr) + "'\"\n")
		b.WriteString("static constexpr auto& " + ref + " = *(" + expr + "\n);\n")
		b.WriteString("#line 1 \"<cubehip name expressions>\"\n")
		b.WriteString(`extern "C" __attribute__((used, visibility("hidden"))) decltype(&` + ref + ") const cubehip_name_" +
			strconv.Itoa(i) + " = &" + ref + ";\n")
		if name := exprName(expr); kernels[name] {
			mode := "loop"
			if fiber[name] {
				mode = "fiber"
			}
			b.WriteString("CUBEHIP_ENTRY(" + strconv.Itoa(i) + nameSuffix + ", " + ref + ", " + mode + ")\n")
		}
	}
	return b.String()
}

// launcherOf is the launcher suffix namedTail gave expression i, "" when it gave none.
func (p *program) launcherOf(i int) string {
	kernels := map[string]bool{}
	for _, b := range p.bodies {
		kernels[b.name] = true
	}
	if kernels[exprName(p.exprs[i])] {
		return strconv.Itoa(i) + nameSuffix
	}
	return ""
}

// lineFileEscape makes s part of a #line directive's file name.
func lineFileEscape(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ", "\r", " ").Replace(s)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// castWords are the casts a name expression may pick an overload with.
var castWords = map[string]bool{"static_cast": true, "reinterpret_cast": true, "const_cast": true}

// exprName is the unqualified name of what a name expression designates: "reduce" for
// "ns::reduce<float, 256>", "scale" for "(void(*)(float*))scale" or
// "static_cast<void(*)(float*)>(&scale)"; "" when the expression is none of those forms.
func exprName(expr string) string {
	toks := tokenize(expr)
	for len(toks) > 0 {
		switch t := toks[0].text; {
		case t == "&" || t == "*":
			toks = toks[1:]
			continue
		case t == "(":
			end := skipParens(toks, 0)
			if end >= len(toks) { // (expr)
				if end > len(toks) || toks[len(toks)-1].text != ")" {
					return ""
				}
				toks = toks[1 : len(toks)-1]
			} else { // (type) expr
				toks = toks[end:]
			}
			continue
		case castWords[t] && len(toks) > 1 && toks[1].text == "<":
			j := skipAngles(toks, 1)
			if j >= len(toks) || toks[j].text != "(" {
				return ""
			}
			toks = toks[j+1 : max(j+1, skipParens(toks, j)-1)]
			continue
		}
		break
	}
	// An id-expression: its last identifier outside template arguments.
	name := ""
	for i := 0; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.text == "<":
			i = skipAngles(toks, i) - 1
		case t.kind == 'i' && t.text != "template":
			name = t.text
		}
	}
	if name != "" && name[0] >= '0' && name[0] <= '9' {
		return ""
	}
	return name
}

// skipAngles returns the index after the ">" closing the "<" at toks[i], skipping what
// parentheses enclose (a comparison in an argument); it stops at a ";" or a brace, which
// no template argument list holds.
func skipAngles(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "<":
			depth++
		case ">":
			depth--
			if depth == 0 {
				return i + 1
			}
		case "(":
			i = skipParens(toks, i) - 1
		case ";", "{", "}":
			return i
		}
	}
	return i
}

// namedKey is the cache key of a program compiled with name expressions: its key
// without them (cacheKey), and the expressions in order (their order numbers the
// launchers). A program without any keeps its key, and its cached objects.
func namedKey(key string, exprs []string) string {
	h := sha256.New()
	part := hashPart(h)
	part("name expressions")
	part(key)
	part(strconv.Itoa(len(exprs)))
	for _, e := range exprs {
		part(e)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// nameRecords is the image's record of each name expression, once the object is built.
func (p *program) nameRecords(object []byte) ([]named, error) {
	if len(p.exprs) == 0 {
		return nil, nil
	}
	syms, err := lowered.Resolve(object, "cubehip_name_", len(p.exprs))
	if err != nil {
		return nil, err
	}
	out := make([]named, len(p.exprs))
	for i, e := range p.exprs {
		out[i] = named{expr: e, lowered: syms[i], launcher: p.launcherOf(i)}
	}
	return out, nil
}

// LoweredNames maps each name expression an image was compiled with (CompileNamed) to
// its lowered name, the name Module.Function takes for it; an image compiled without any
// gives an empty map. Bytes that are no cpu code object are an error.
func LoweredNames(image []byte) (map[string]string, error) {
	im, err := decodeImage(image)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(im.names))
	for _, n := range im.names {
		out[n.expr] = n.lowered
	}
	return out, nil
}
