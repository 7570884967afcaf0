package jit

import (
	"strconv"
	"strings"
)

// A stencil's index is often the global thread index plus a constant, `int x =
// blockIdx.x * blockDim.x + threadIdx.x + 1` (the first interior point). The thread loop
// of a loop entry (cubehip_entry.h) runs over the global index itself, as an int, so that
// GCC 12 can split it at `if (i < n)` and vectorize the rest without masks; with the +1,
// the guard is on another value than the loop's counter, which GCC 12 does not split
// (it splits only on a counter of the loop), and the if-converted loop it falls back to
// computes the guarded addresses in unsigned arithmetic, which its vectorizer cannot
// follow: the loop stays scalar. Told the constant, the thread loop counts over the index
// plus it instead (CUBEHIP_THREADS_BEGIN_AT), and the stencil's guard is on the loop's
// own counter again. Measured on the 2-core dev VM, one core, the Jacobi stencil 1024²:
// see docs/benchmarks.md.

// maxIndexOffset bounds the constant: the thread loop's int counter must still fit.
const maxIndexOffset = 1 << 16

// indexOffset is C of the first declaration of an int local as the global x index plus
// the integer constant C (tokens [lo, hi) of an entry body), 0 if there is none.
func indexOffset(toks []token, lo, hi int) int {
	for i := lo; i+1 < hi; i++ {
		if toks[i].text != "int" || i > lo && (toks[i-1].text == "unsigned" || toks[i-1].text == "long" || toks[i-1].text == "short") {
			continue
		}
		// int name = <index> (+|-) C, each declarator of the declaration in turn.
		depth := 0
		for j := i + 1; j < hi && !(depth == 0 && toks[j].text == ";"); j++ {
			switch toks[j].text {
			case "(", "[", "{":
				depth++
				continue
			case ")", "]", "}":
				depth--
			}
			if depth < 0 {
				break // a for's init, or a cast: the declaration ended
			}
			if depth != 0 || toks[j].kind != 'i' || j+1 >= hi || toks[j+1].text != "=" || toks[j-1].text != "int" && toks[j-1].text != "," {
				continue
			}
			var words []string
			for k := j + 2; k < hi && toks[k].text != ";" && toks[k].text != ","; k++ {
				words = append(words, canonicalIndexWord(toks[k].text))
			}
			if c, ok := offsetOf(strings.Join(words, " ")); ok {
				return c
			}
		}
	}
	return 0
}

// canonicalIndexWord maps HIP's index macros onto the builtins' spelling.
func canonicalIndexWord(w string) string {
	switch w {
	case "hipThreadIdx_x":
		return "threadIdx . x"
	case "hipBlockIdx_x":
		return "blockIdx . x"
	case "hipBlockDim_x":
		return "blockDim . x"
	}
	return w
}

// offsetOf parses "<index> + C" or "<index> - C", <index> being the global x index in one
// of its usual spellings.
func offsetOf(expr string) (int, bool) {
	for _, index := range []string{
		"blockIdx . x * blockDim . x + threadIdx . x",
		"blockDim . x * blockIdx . x + threadIdx . x",
		"threadIdx . x + blockIdx . x * blockDim . x",
		"threadIdx . x + blockDim . x * blockIdx . x",
	} {
		rest, ok := strings.CutPrefix(expr, index+" ")
		if !ok {
			continue
		}
		sign, num, ok := strings.Cut(rest, " ")
		if !ok || sign != "+" && sign != "-" {
			return 0, false
		}
		c, err := strconv.Atoi(num)
		if err != nil || c <= 0 || c > maxIndexOffset {
			return 0, false
		}
		if sign == "-" {
			c = -c
		}
		return c, true
	}
	return 0, false
}
