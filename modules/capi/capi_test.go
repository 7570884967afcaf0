package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The C tests build the library once per test binary, the way a host gets it: with
// -buildmode=c-shared, into a temporary directory, then compile C and C++ hosts against
// include/ and that library and run them.
var (
	libOnce sync.Once
	libDir  string
	libErr  error
)

// root is the repository the module sits in. A test of what the repository holds beside
// the module (the install script, the canonical headers) skips where the module is
// built alone, from its zip, as `scripts/gowork-off.sh` and an outside project do: there
// is no repository around it then, only the module's own copy of the headers.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "include", "cubehip.h")); err != nil {
		t.Skipf("the module is built outside its repository (%v): the repository's files are not here", err)
	}
	return dir
}

func buildLibrary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds libcubehip.so: not in -short")
	}
	libOnce.Do(func() {
		libDir, libErr = os.MkdirTemp("", "cubehip-capi-")
		if libErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(libDir, "libcubehip.so"), ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			libErr = &buildError{out: string(out), err: err}
		}
	})
	require.NoError(t, libErr)
	return libDir
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func cc() string {
	if c := os.Getenv("CC"); c != "" {
		return c
	}
	return "cc"
}

// compileHost builds one C or C++ host against the header and the test library.
func compileHost(t *testing.T, compiler string, src string, extra ...string) string {
	t.Helper()
	lib := buildLibrary(t)
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-Wall", "-Wextra", "-Werror", "-g", "-I", "include", src,
		"-L", lib, "-lcubehip", "-lpthread", "-Wl,-rpath," + lib, "-o", bin}, extra...)
	out, err := exec.Command(compiler, args...).CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", compiler, strings.Join(args, " "), out)
	return bin
}

func runHost(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin)
	// The hosts run on $CUBEHIP_PLATFORM (a GPU runner sets it), else the cpu device.
	platform := os.Getenv("CUBEHIP_PLATFORM")
	if platform == "" || platform == "auto" {
		platform = "cpu"
	}
	cmd.Env = append(os.Environ(), "CUBEHIP_PLATFORM="+platform)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:\n%s", bin, out)
	return string(out)
}

// TestABI runs the C test of every function and error path, with the undefined-behaviour
// sanitizer on the host's side (the Go runtime inside the library does not run under a
// C sanitizer).
func TestABI(t *testing.T) {
	bin := compileHost(t, cc(), "tests/abi_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}

func TestExampleC(t *testing.T) {
	out := runHost(t, compileHost(t, cc(), "examples/c/saxpy.c", "-std=c99"))
	require.Contains(t, out, "saxpy over 1048576 elements: ok")
}

// TestHeaderMatchesExports holds include/cubehip.h, the hand-written contract, to the
// functions the library really exports: every function the header declares is
// exported, and every export is declared (the C compiler already checks that the
// prototypes agree, since the exports are compiled against the header).
func TestHeaderMatchesExports(t *testing.T) {
	hdr, err := os.ReadFile(filepath.Join("include", "cubehip.h"))
	require.NoError(t, err)
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^[a-z_0-9 ]+[ *]+(cubehip_[a-z_0-9]+)\(`).FindAllStringSubmatch(string(hdr), -1) {
		declared[m[1]] = true
	}
	exported := map[string]bool{"cubehip_last_error": true} // defined in lasterror.c
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`(?m)^//export (cubehip_[a-z_0-9]+)$`).FindAllStringSubmatch(string(src), -1) {
			exported[m[1]] = true
		}
	}
	require.Equal(t, keys(declared), keys(exported))
	if runtime.GOOS == "linux" {
		// And the built library's dynamic symbols carry them all.
		lib := filepath.Join(buildLibrary(t), "libcubehip.so")
		out, err := exec.Command("nm", "-D", "--defined-only", lib).Output()
		require.NoError(t, err)
		for name := range declared {
			require.Regexp(t, regexp.MustCompile(`(?m) T `+name+`$`), string(out), "%s is not exported by the library", name)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func cxx() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "c++"
}

func TestExampleCPP(t *testing.T) {
	out := runHost(t, compileHost(t, cxx(), "examples/cpp/saxpy.cpp", "-std=c++17"))
	require.Contains(t, out, "saxpy over 1048576 elements: ok")
	require.Contains(t, out, "wrong element type refused: ok")
	require.Contains(t, out, "compile error reported: ok")
	require.Contains(t, out, "released handle rejected: ok")
}

// TestInstall does what the README tells a C user to: build and install the library
// under a prefix with scripts/build-capi.sh, then build a host with pkg-config alone.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds libcubehip.so: not in -short")
	}
	if _, err := exec.LookPath("pkg-config"); err != nil {
		t.Fatalf("pkg-config is not installed (scripts/deps.sh installs pkgconf): %v", err)
	}
	prefix := t.TempDir()
	cmd := exec.Command(filepath.Join(root(t), "scripts", "build-capi.sh"), "--install", "--prefix", prefix)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, f := range []string{"lib/libcubehip.so", "lib/libcubehip.so.0", "include/cubehip.h", "include/cubehip.hpp", "lib/pkgconfig/cubehip.pc"} {
		require.FileExists(t, filepath.Join(prefix, f))
	}
	soname, err := exec.Command("readelf", "-d", filepath.Join(prefix, "lib", "libcubehip.so")).Output()
	require.NoError(t, err)
	require.Contains(t, string(soname), "Library soname: [libcubehip.so.0]")

	pc := exec.Command("pkg-config", "--cflags", "--libs", "cubehip")
	pc.Env = append(os.Environ(), "PKG_CONFIG_PATH="+filepath.Join(prefix, "lib", "pkgconfig"))
	flags, err := pc.Output()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "saxpy")
	args := append([]string{"examples/c/saxpy.c", "-o", bin, "-Wl,-rpath," + filepath.Join(prefix, "lib")}, strings.Fields(string(flags))...)
	out, err = exec.Command(cc(), args...).CombinedOutput()
	require.NoError(t, err, "cc %s:\n%s", strings.Join(args, " "), out)
	require.Contains(t, runHost(t, bin), "saxpy over 1048576 elements: ok")
}

// TestHeadersAreTheRepositorys: the module holds the one copy of cubehip.h and
// cubehip.hpp (a Go module's zip holds only its own directory and drops symbolic links,
// and cgo compiles the exports against the header), and the repository's include/ holds
// symbolic links to them (include/README.md says why). A link replaced by a file of its
// own would drift from the module's copy unseen, so each must still be a link that
// resolves to the module's file.
func TestHeadersAreTheRepositorys(t *testing.T) {
	for _, h := range []string{"cubehip.h", "cubehip.hpp"} {
		top := filepath.Join(root(t), "include", h)
		fi, err := os.Lstat(top)
		require.NoError(t, err)
		require.True(t, fi.Mode()&os.ModeSymlink != 0, "include/%s is a file of its own: the header lives in modules/capi/include/%s, and include/%s is a link to it (ln -sf ../modules/capi/include/%s include/%s)", h, h, h, h, h)
		got, err := filepath.EvalSymlinks(top)
		require.NoError(t, err)
		want, err := filepath.EvalSymlinks(filepath.Join("include", h))
		require.NoError(t, err)
		want, err = filepath.Abs(want)
		require.NoError(t, err)
		require.Equal(t, want, got, "include/%s links elsewhere than modules/capi/include/%s", h, h)
	}
}
