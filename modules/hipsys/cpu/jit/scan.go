package jit

import "strings"

// token is one C++ token of a kernel source, as much of one as the scanner needs:
// identifiers, string literals (to see extern "C") and single punctuation characters.
type token struct {
	kind       byte // 'i' identifier or number, 's' string literal, 'p' punctuation
	text       string
	start, end int // byte range in the source
}

// tokenize splits src into tokens, dropping comments, character literals and
// preprocessor lines: what a #define says is invisible here, which is why a kernel
// declared through a macro is not found (nor is it on the other platforms' hiprtc, which
// needs the name spelled out to look it up).
func tokenize(src string) []token {
	var toks []token
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' && lineStart:
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					i++
				}
				i++
			}
			continue
		}
		lineStart = false
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = len(src)
			} else {
				i += j + 4
			}
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(src) {
				j++
			}
			j = min(j, len(src)) // a trailing backslash stepped past the end
			if c == '"' {
				toks = append(toks, token{'s', src[i:j], i, j})
			}
			i = j
		case isIdent(c):
			j := i
			for j < len(src) && isIdent(src[j]) {
				j++
			}
			toks = append(toks, token{'i', src[i:j], i, j})
			i = j
		default:
			toks = append(toks, token{'p', src[i : i+1], i, i + 1})
			i++
		}
	}
	return toks
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipParens returns the index just past the balanced (...) group starting at toks[i].
func skipParens(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// attributes are the words that may sit among a kernel's declaration specifiers with a
// parenthesized argument, and must not be taken for the kernel's name.
var attributes = map[string]bool{
	"__launch_bounds__": true, "__attribute__": true, "__declspec": true, "alignas": true, "__align__": true,
}
