package compute

import (
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// EnvCacheDir overrides the on-disk kernel cache directory.
const EnvCacheDir = "CUBEHIP_CACHE_DIR"

// diskCache keeps code objects across processes: one file per kernel id, platform and
// device architecture, so a code object is only ever loaded on the architecture it was
// built for. Every failure only costs a compile: the cache is an optimisation, so it
// logs and carries on.
type diskCache struct {
	dir    string
	suffix string
	log    *slog.Logger
}

// openDiskCache returns the cache under dir ("" : $CUBEHIP_CACHE_DIR, else cubehip under
// the user cache dir; "-": none), or nil when there is none.
func openDiskCache(dir, platform, arch string, log *slog.Logger) *diskCache {
	if dir == "" {
		dir = os.Getenv(EnvCacheDir)
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(base, "cubehip")
	}
	if dir == "-" {
		return nil
	}
	dir = filepath.Join(dir, "kernels")
	return &diskCache{dir: dir, suffix: "-" + clean(platform) + "-" + clean(arch) + ".co", log: log}
}

// clean keeps an architecture string ("gfx90a:sramecc+:xnack-") file-name safe.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_':
			return r
		case r == '+':
			return 'p'
		}
		return '-'
	}, s)
}

func (d *diskCache) path(id KernelID) string {
	return filepath.Join(d.dir, hex.EncodeToString(id[:])+d.suffix)
}

// read is the cached code object for id, nil if there is none.
func (d *diskCache) read(id KernelID) []byte {
	if d == nil {
		return nil
	}
	code, err := os.ReadFile(d.path(id))
	if err != nil || len(code) == 0 {
		return nil
	}
	return code
}

// write stores code for id atomically (a temporary file renamed over the name), so a
// concurrent process reads either nothing or the whole object, never half of one.
func (d *diskCache) write(id KernelID, code []byte) {
	if d == nil {
		return
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		d.log.Debug("server: kernel cache unavailable", "dir", d.dir, "err", err)
		return
	}
	f, err := os.CreateTemp(d.dir, ".tmp-*")
	if err != nil {
		d.log.Debug("server: kernel cache unavailable", "dir", d.dir, "err", err)
		return
	}
	_, werr := f.Write(code)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(f.Name(), d.path(id))
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		d.log.Debug("server: kernel cache write failed", "err", werr, "close", cerr)
	}
}
