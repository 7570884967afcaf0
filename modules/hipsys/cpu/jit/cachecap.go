package jit

import (
	"os"
	"path/filepath"

	"github.com/cubehip/cubehip/modules/hipsys/diskcap"
)

// The cache's size cap is package diskcap's, which the server's disk cache applies to the
// same directory: one rule and one count per directory.

// EnvCacheMaxBytes caps the cache directory's size (diskcap.EnvMaxBytes).
const EnvCacheMaxBytes = diskcap.EnvMaxBytes

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// touch marks path as used now, for the least-recently-used order.
func touch(path string) { diskcap.Touch(path) }

// grewCache records n bytes written under the jit's directory for cacheDir, when that is
// cacheDir's own (not the private temporary directory workDir falls back to, whose
// parent is no cache of ours).
func grewCache(cacheDir string, n int64) {
	if workDir(cacheDir) == filepath.Join(cacheDir, layoutVersion) {
		diskcap.Grew(cacheDir, n)
	}
}
