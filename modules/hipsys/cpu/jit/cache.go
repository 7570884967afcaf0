package jit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

// layoutVersion names the cache's directory; bump it when what is stored changes shape.
const layoutVersion = "cpu-v1"

// DefaultCacheDir is $CUBEHIP_CACHE_DIR, else cubehip under the user cache directory,
// else under the temporary directory (a service account may have no home).
func DefaultCacheDir() string {
	if d := os.Getenv("CUBEHIP_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "cubehip")
	}
	return filepath.Join(os.TempDir(), "cubehip-"+strconv.Itoa(os.Getuid()))
}

// codeKey hashes everything but the program that decides the object a compile with
// options builds, so that a cache keyed by the program and codeKey is never stale:
//   - the cache layout and the prelude with its generator (the device library every
//     kernel is compiled against and the code wrapped around it: a fixed device
//     function must reach kernels compiled before the fix);
//   - the compiler: $CXX, the binary it resolves to and its --version output, not just
//     its name, so an upgrade or a wrapper misses;
//   - $CUBEHIP_CPU_CXXFLAGS, appended to every compile;
//   - the warp width, which the prelude's warp functions and warpSize are built for (a
//     32-lane object run at 64 lanes gives 32-lane answers);
//   - the host CPU (objects are built with -march=native and would fault on an older
//     CPU sharing the cache);
//   - the options.
//
// Each part is length-prefixed so no two different inputs concatenate to the same bytes.
func codeKey(tc *toolchain, options []string) string {
	h := sha256.New()
	part := hashPart(h)
	part(layoutVersion)
	part(preludeHash())
	part(tc.identity)
	flags := extraFlags()
	part(strconv.Itoa(len(flags)))
	for _, f := range flags {
		part(f)
	}
	part("warp" + strconv.Itoa(WarpSize))
	part(cpuKey())
	part(strconv.Itoa(len(options)))
	for _, o := range options {
		part(o)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cacheKey is the key of one compile's object: its codeKey, headers and source.
func cacheKey(code string, headers []header, source string) string {
	h := sha256.New()
	part := hashPart(h)
	part(code)
	part(strconv.Itoa(len(headers)))
	for _, hd := range headers {
		part(hd.name)
		part(hd.source)
	}
	part(source)
	return hex.EncodeToString(h.Sum(nil))
}

// hashPart writes each string to h after its length.
func hashPart(h hash.Hash) func(string) {
	return func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
}

type header struct{ name, source string }

var cpuKey = sync.OnceValue(func() string {
	c := cpuid.CPU
	key := c.BrandName + "|" + c.VendorString + "|" + strconv.Itoa(c.Family) + "." + strconv.Itoa(c.Model) + "|"
	for _, f := range c.FeatureSet() {
		key += f + ","
	}
	return key
})

// readCached returns the file's bytes, or nil when it is absent or unreadable: a cache
// that cannot be read is a miss, never an error.
func readCached(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// writeAtomic writes through a temporary file in the same directory and renames it into
// place, so a concurrent reader (another process sharing the cache) sees the whole file
// or none. Two writers of the same key write the same bytes; the last rename wins.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
