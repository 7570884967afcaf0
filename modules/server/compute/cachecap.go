package compute

import "github.com/cubehip/cubehip/modules/hipsys/diskcap"

// The cache's size cap is package diskcap's, which the cpu device's jit applies to the
// same directory: one rule and one count per directory.

// EnvCacheMaxBytes caps the cache directory's size (diskcap.EnvMaxBytes).
const EnvCacheMaxBytes = diskcap.EnvMaxBytes

// touch marks path as used now, for the least-recently-used order.
func touch(path string) { diskcap.Touch(path) }

// grew records n bytes written under root and evicts when they may have taken it over
// the cap.
func grew(root string, n int64) { diskcap.Grew(root, n) }
