package jit

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The device side every kernel is compiled against (prelude/cubehip_prelude.h and the
// headers it includes) and the ABI shared with runner.c.
//
//go:embed prelude/*.h
var preludeFS embed.FS

// generatorVersion changes whenever the Go side changes what it generates (entries.go's
// tail, the source rewrite or the compiler flags), so old cached objects miss.
const generatorVersion = "gen-11"

// includeFiles maps each file of the include directory that is not a prelude file of the
// same name (those are all there, under their own names) to its embedded source: the hip/
// names kernel sources include on every platform (hipHeaders).
var includeFiles = map[string]string{}

// hipHeaders are the public headers of HIP's include/hip directory: each maps to
// cubehip's own (the prelude, or the piece of HIP's device side it names), so a kernel
// never reaches the system's ROCm headers, which need the AMD or NVIDIA compiler (and stop
// at an #error without one).
var hipHeaders = map[string]string{
	"hip_runtime.h": "prelude/hip_runtime.h", "hip_runtime_api.h": "prelude/hip_runtime.h",
	"hip_fp16.h": "prelude/hip_fp16.h", "hip_bf16.h": "prelude/hip_bf16.h", "hip_bfloat16.h": "prelude/hip_bf16.h",
	"hip_cooperative_groups.h": "prelude/hip_cooperative_groups.h",
	"hip_vector_types.h":       "prelude/hip_runtime.h", "math_functions.h": "prelude/hip_runtime.h",
	"device_functions.h": "prelude/hip_runtime.h", "hip_common.h": "prelude/hip_runtime.h",
	"hip_math_constants.h": "prelude/hip_runtime.h", "hip_version.h": "prelude/hip_runtime.h",
	"hip_complex.h": "prelude/hip_complex.h", "hip_ext.h": "prelude/hip_runtime.h",
	"hip_profile.h": "prelude/hip_runtime.h", "hip_texture_types.h": "prelude/hip_runtime.h",
	"channel_descriptor.h": "prelude/hip_runtime.h", "driver_types.h": "prelude/hip_runtime.h",
	"library_types.h": "prelude/hip_runtime.h", "surface_types.h": "prelude/hip_runtime.h",
	"texture_types.h": "prelude/hip_runtime.h", "hip_hcc.h": "prelude/hip_runtime.h",
}

func init() {
	for name, src := range hipHeaders {
		includeFiles["hip/"+name] = src
	}
}

var preludeHash = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte(generatorVersion))
	files, _ := fs.Glob(preludeFS, "prelude/*.h")
	for _, f := range files { // Glob sorts, so the hash is stable
		b, _ := preludeFS.ReadFile(f)
		h.Write([]byte(f))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
})

// includeDir writes the prelude into root/include-<hash> once (per cache, not per
// process: a warm process never needs it) and returns the directory. It is built in a
// scratch directory and renamed into place, so a concurrent process sees all of it or
// builds its own.
func includeDir(root string) (string, error) {
	dir := filepath.Join(root, "include-"+preludeHash()[:16])
	if _, err := os.Stat(filepath.Join(dir, "cubehip_prelude.h")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".include-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	files := map[string]string{}
	prelude, _ := fs.Glob(preludeFS, "prelude/*.h")
	for _, f := range prelude {
		files[filepath.Base(f)] = f
	}
	for name, src := range includeFiles {
		files[name] = src
	}
	for name, src := range files {
		b, err := preludeFS.ReadFile(src)
		if err != nil {
			return "", err
		}
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "cubehip_prelude.h")); serr == nil {
			return dir, nil // another process won the race
		}
		return "", err
	}
	return dir, nil
}
