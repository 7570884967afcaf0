package compute

import (
	"regexp"
	"slices"
	"strings"
)

var (
	entryComments = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	// A __global__ function's name is the identifier right before the parameter list
	// that follows the keyword (a template's argument list comes before the keyword),
	// past any attribute with arguments of its own (cppWords).
	entryCall = regexp.MustCompile(`([A-Za-z_]\w*)\s*\(`)
)

// definedKernels lists the names of the __global__ functions source declares, in the
// order they appear, each once: what a missing entry's error offers instead. It reads
// the text, not the preprocessed source, so a kernel declared through a macro is not
// listed and one in a disabled #if is; the list is a hint for the reader, never a
// decision.
func definedKernels(source string) []string {
	src := entryComments.ReplaceAllString(source, " ")
	var names []string
	for rest := src; ; {
		at := strings.Index(rest, "__global__")
		if at < 0 {
			return names
		}
		rest = rest[at+len("__global__"):]
		if name := declaredName(rest); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
}

// declaredName is the name of the function whose declaration text follows: the first
// identifier before a "(" that is not an attribute, "" when a ";", "{" or "}" comes
// first (the keyword was not a declaration's).
func declaredName(text string) string {
	for {
		m := entryCall.FindStringSubmatchIndex(text)
		if m == nil || strings.ContainsAny(text[:m[0]], ";{}") {
			return ""
		}
		name := text[m[2]:m[3]]
		if !cppWords[name] {
			return name
		}
		// Skip the attribute's balanced argument list.
		depth, i := 1, m[1]
		for ; i < len(text) && depth > 0; i++ {
			switch text[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		text = text[i:]
	}
}

// cppWords are words that may stand before a parenthesis after __global__ and are no
// kernel's name: __launch_bounds__(256), __attribute__((...)), decltype(...).
var cppWords = map[string]bool{"__launch_bounds__": true, "__attribute__": true, "decltype": true, "alignas": true}

// missingEntryLog is the log of a compile error for an entry point the source does not
// define: the name asked for and the ones it does define, so a misspelling is seen.
func missingEntryLog(entry, source string) string {
	var b strings.Builder
	names := definedKernels(source)
	if slices.Contains(names, entry) {
		// The text declares it, the compiled module lacks it: declared through a macro
		// the platform's entry lookup does not expand, or with C++ linkage.
		return `the compiled module has no entry point "` + entry + `" though the source seems to declare one ` +
			`(with C++ linkage, or through a macro): declare it extern "C", or take it by a name expression`
	}
	b.WriteString("the source has no kernel named ")
	b.WriteString(`"` + entry + `"`)
	if len(names) > 0 {
		b.WriteString(" (it defines: " + strings.Join(names, ", ") + ")")
	} else {
		b.WriteString(" (it declares no __global__ function)")
	}
	b.WriteString(`: an entry point is an extern "C" __global__ function of that name, or a C++ one the module resolves as a name expression`)
	return b.String()
}
