package jit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Precompiled preludes. Parsing the prelude (<cmath>, <type_traits> and the device
// library) is about a third of a small kernel's compile; GCC can load it precompiled
// instead. A precompiled header is only valid for the flags it was built with, so there
// is one per set of code-generation flags: a copy of the include directory with
// cubehip_base.h.gch beside cubehip_base.h, under DefaultCacheDir, shared by every
// compiler and process. Only cubehip_base.h, the part of the prelude no jit mode
// (CUBEHIP_WARPS, CUBEHIP_TLS_BUILTINS) touches, is precompiled, and a compile
// -includes it before cubehip_prelude.h: GCC accepts a precompiled header when the
// macros defined before it do not appear in it, so one serves every mode (precompiling
// the whole prelude took one 21 MB header per mode a program's kernels used). The first
// compile of a set runs without one and starts building it in the background, so no
// compile waits for it; later compiles of new kernels use it. GCC ignores a precompiled
// header that does not fit (a -D of the user's that the prelude tests), reading the
// prelude itself instead, so a stale or foreign one costs time, never correctness.
// Clang's precompiled headers work differently and are not used; CUBEHIP_CPU_PCH=0 turns
// the whole thing off.

// pchHeader is the header precompiled, and -included first by every compile.
const pchHeader = "cubehip_base.h"

// pchStarted, when set (by a test), is called once a build's compiler is running.
var pchStarted func()

// pchBuilds holds the sets whose precompiled prelude this process started building.
var pchBuilds sync.Map

// preludeDir is the include directory a compile with flags (code generation flags, no
// modes, no paths) uses: the precompiled copy when it is ready, else inc.
func preludeDir(tc *toolchain, inc string, flags []string) string {
	if os.Getenv("CUBEHIP_CPU_PCH") == "0" || strings.Contains(tc.identity, "clang") {
		return inc
	}
	sum := sha256.Sum256([]byte(tc.identity + "\x00" + filepath.Base(inc) + "\x00" + strings.Join(flags, "\x00")))
	dir := filepath.Join(workDir(DefaultCacheDir()), "pch", hex.EncodeToString(sum[:12]))
	if gch := filepath.Join(dir, pchHeader+".gch"); exists(gch) {
		touch(gch) // recently used: the cache's size cap evicts it last
		return dir
	}
	if _, started := pchBuilds.LoadOrStore(dir, true); !started {
		go buildPCH(tc, inc, dir, flags)
	}
	return inc
}

// buildPCH copies inc and precompiles its base with flags into a scratch directory,
// then renames it to dir: other processes see all of it or nothing. Failures leave no
// directory, and compiles go on without one.
func buildPCH(tc *toolchain, inc, dir string, flags []string) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-*")
	if err != nil {
		return
	}
	err = filepath.WalkDir(inc, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(inc, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(rel)), 0o700); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, rel), b, 0o600)
	})
	if err != nil {
		os.RemoveAll(tmp)
		return
	}
	args := append([]string{}, tc.argv[1:]...)
	args = append(args, headerFlags(flags)...)
	args = append(args, "-I", tmp, "-o", filepath.Join(tmp, pchHeader+".gch"), filepath.Join(tmp, pchHeader))
	// The shell renames the finished build into place, not this process: a program that
	// exits before the compiler is done (a short run) would otherwise leave a 21 MB
	// scratch directory and no header, and the next run would start over. Its own
	// process group keeps a Ctrl-C meant for the program from cutting the build short.
	// mv -T renames the directory itself; where another process won, it fails and the
	// scratch is removed: that copy is as good.
	script := `"$@" && mv -T "$PCH_TMP" "$PCH_DIR"; rm -rf "$PCH_TMP"`
	cmd := exec.CommandContext(context.Background(), "/bin/sh", append([]string{"-c", script, "sh", tc.argv[0]}, args...)...)
	cmd.Env = append(os.Environ(), "PCH_TMP="+tmp, "PCH_DIR="+dir)
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Start() != nil {
		os.RemoveAll(tmp)
		return
	}
	if pchStarted != nil {
		pchStarted()
	}
	_ = cmd.Wait()
	if st, err := os.Stat(filepath.Join(dir, pchHeader+".gch")); err == nil {
		grewCache(DefaultCacheDir(), st.Size())
	}
}

// headerFlags are compile flags for precompiling a header: the language becomes
// c++-header, and linking flags go.
func headerFlags(flags []string) []string {
	out := []string{"-x", "c++-header"}
	for i := 0; i < len(flags); i++ {
		switch f := flags[i]; {
		case f == "-x" && i+1 < len(flags):
			i++
		case f == "-shared" || strings.HasPrefix(f, "-Wl,"):
		default:
			out = append(out, f)
		}
	}
	return out
}
