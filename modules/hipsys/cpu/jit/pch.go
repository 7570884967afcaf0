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
)

// Precompiled preludes. Parsing the prelude (<cmath>, <type_traits> and the device
// library) is about a third of a small kernel's compile; GCC can load it precompiled
// instead. A precompiled header is only valid for the flags it was built with, and the
// prelude tests the jit's mode macros (CUBEHIP_WARPS, CUBEHIP_TLS_BUILTINS), so there is
// one per set of code-generation flags and modes: a copy of the include directory with
// cubehip_prelude.h.gch beside cubehip_prelude.h, under DefaultCacheDir, shared by every
// compiler and process. The first compile of a set runs without one and starts building
// it in the background, so no compile waits for it; later compiles of new kernels use it.
// GCC ignores a precompiled header that does not fit (a -D of the user's that the prelude
// tests), reading the prelude itself instead, so a stale or foreign one costs time, never
// correctness. Clang's precompiled headers work differently and are not used;
// CUBEHIP_CPU_PCH=0 turns the whole thing off.

// pchBuilds holds the sets whose precompiled prelude this process started building.
var pchBuilds sync.Map

// preludeDir is the include directory a compile with flags (code generation and mode
// flags, no paths) uses: the precompiled copy when it is ready, else inc.
func preludeDir(tc *toolchain, inc string, flags []string) string {
	if os.Getenv("CUBEHIP_CPU_PCH") == "0" || strings.Contains(tc.identity, "clang") {
		return inc
	}
	sum := sha256.Sum256([]byte(tc.identity + "\x00" + filepath.Base(inc) + "\x00" + strings.Join(flags, "\x00")))
	dir := filepath.Join(workDir(DefaultCacheDir()), "pch", hex.EncodeToString(sum[:12]))
	if _, err := os.Stat(filepath.Join(dir, "cubehip_prelude.h.gch")); err == nil {
		return dir
	}
	if _, started := pchBuilds.LoadOrStore(dir, true); !started {
		go buildPCH(tc, inc, dir, flags)
	}
	return inc
}

// buildPCH copies inc and precompiles its prelude with flags into a scratch directory,
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
	defer os.RemoveAll(tmp)
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
		return
	}
	args := append([]string{}, tc.argv[1:]...)
	args = append(args, headerFlags(flags)...)
	args = append(args, "-I", tmp, "-o", filepath.Join(tmp, "cubehip_prelude.h.gch"), filepath.Join(tmp, "cubehip_prelude.h"))
	cmd := exec.CommandContext(context.Background(), tc.argv[0], args...)
	cmd.Dir = tmp
	if cmd.Run() != nil {
		return
	}
	_ = os.Rename(tmp, dir) // another process may have won: its copy is as good
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
