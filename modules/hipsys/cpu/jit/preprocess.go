package jit

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// conditional matches a line that opens a preprocessor conditional (#if, #ifdef,
// #ifndef): only a source that has one can hide a kernel from the compiler, so only such
// a source pays for a preprocessor run before its entries are taken.
var conditional = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*if`)

// liveLines runs the compiler's preprocessor over the source file (args are the compile's
// own flags, so -D options, headers and the prelude's macros decide the conditionals as
// they will in the compile) and returns the set of source lines that survive it: a
// kernel on a line a disabled #if removed is not an entry. It returns nil, meaning "take
// every line", when the source has no conditional, or when the preprocessor fails: the
// compile that follows reports that failure with its full log.
//
// GCC's -fdirectives-only evaluates the directives without expanding macros, about half
// the cost of a full -E; other compilers get a plain -E, whose expanded lines are just as
// good for telling live lines from removed ones.
func liveLines(tc *toolchain, dir, file, src string, args []string) map[int]bool {
	if !conditional.MatchString(src) {
		return nil
	}
	pp := append([]string{}, tc.argv[1:]...)
	pp = append(pp, "-E")
	if !strings.Contains(tc.identity, "clang") {
		pp = append(pp, "-fdirectives-only")
	}
	pp = append(pp, args...)
	pp = append(pp, file)
	cmd := exec.CommandContext(context.Background(), tc.argv[0], pp...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	if cmd.Run() != nil {
		return nil
	}
	return mainFileLines(out.String(), file)
}

// mainFileLines reads preprocessor output: line markers (`# 12 "file" flags`) say which
// file and line the next output line comes from; every non-blank output line of file is
// live.
func mainFileLines(out, file string) map[int]bool {
	live := map[int]bool{}
	quoted := strconv.Quote(file)
	inMain, line := false, 0
	for _, l := range strings.Split(out, "\n") {
		if n, name, ok := lineMarker(l); ok {
			inMain, line = name == quoted, n
			continue
		}
		if inMain && strings.TrimSpace(l) != "" {
			live[line] = true
		}
		line++
	}
	return live
}

// lineMarker parses `# <line> "<file>" [flags]` (GCC's and Clang's form) and `#line N
// "file"`.
func lineMarker(l string) (int, string, bool) {
	rest, ok := strings.CutPrefix(l, "# ")
	if !ok {
		if rest, ok = strings.CutPrefix(l, "#line "); !ok {
			return 0, "", false
		}
	}
	num, name, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, "", false
	}
	if i := strings.LastIndex(name, `"`); strings.HasPrefix(name, `"`) && i > 0 {
		name = name[:i+1]
	}
	return n, name, true
}
