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
const generatorVersion = "gen-5"

// includeFiles maps each file of the include directory to its embedded source; the
// hip/ names are what kernel sources include on every platform.
var includeFiles = map[string]string{
	"cubehip_abi.h":         "prelude/cubehip_abi.h",
	"cubehip_prelude.h":     "prelude/cubehip_prelude.h",
	"cubehip_vector.h":      "prelude/cubehip_vector.h",
	"cubehip_device.h":      "prelude/cubehip_device.h",
	"cubehip_fiber.h":       "prelude/cubehip_fiber.h",
	"cubehip_entry.h":       "prelude/cubehip_entry.h",
	"hip/hip_runtime.h":     "prelude/hip_runtime.h",
	"hip/hip_runtime_api.h": "prelude/hip_runtime.h",
	"hip/hip_fp16.h":        "prelude/hip_runtime.h",
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
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".include-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for name, src := range includeFiles {
		b, err := preludeFS.ReadFile(src)
		if err != nil {
			return "", err
		}
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
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
