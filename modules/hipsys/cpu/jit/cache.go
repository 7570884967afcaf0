package jit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/diskcap"

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
//   - $CUBEHIP_CPU_REGIONS, which decides whether barrier kernels are rewritten into
//     regions or run as fibers (regions.go);
//   - the host CPU (objects are built with -march=native and would fault on an older
//     CPU sharing the cache);
//   - the options (and, for memcheck, whether its shadow is there: check.go).
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
	part("regions=" + boolFlag(regionsEnabled()))
	part(cpuKey())
	part(strconv.Itoa(len(options)))
	for _, o := range options {
		part(o)
	}
	if c, _ := takeChecks(options); c&(hipsys.CheckMemory|hipsys.CheckInit|hipsys.CheckRace) != 0 {
		// The instrumentation follows whether this process has the checker's shadow
		// (check.go's inlineShadow; racecheck may leave the source to the others).
		part("shadow=" + boolFlag(shadowReady()))
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

// workDir is the directory under cacheDir the jit keeps its files in (cacheDir/cpu-v1,
// created 0700), the same for the life of the process. Objects found there are loaded
// into the process (dlopen), so it must be the user's own and writable by no one else,
// and so must cacheDir, whose other writers could swap cpu-v1 for a directory of their
// own. Where it is not (or cannot be created), the jit works, after one warning per
// process and directory, in a fresh private directory under the temporary directory,
// and keeps nothing across processes.
func workDir(cacheDir string) string {
	workDirs.Lock()
	defer workDirs.Unlock()
	if d, ok := workDirs.m[cacheDir]; ok {
		return d
	}
	d := filepath.Join(cacheDir, layoutVersion)
	err := os.MkdirAll(d, 0o700)
	for _, dir := range []string{cacheDir, d} {
		if err == nil {
			err = private(dir)
		}
	}
	if err != nil {
		if tmp, terr := os.MkdirTemp("", "cubehip-cpu-"); terr == nil {
			slog.Warn("cpu: kernel cache directory not used; compiled kernels are not kept across processes", "err", err, "instead", tmp)
			d = tmp
		}
	}
	if workDirs.m == nil {
		workDirs.m = map[string]string{}
	}
	workDirs.m[cacheDir] = d
	return d
}

var workDirs struct {
	sync.Mutex
	m map[string]string // cache dir -> the directory used for it
}

// private is diskcap.Private: the cache directory is owned by this user and writable by no
// one else.
func private(dir string) error { return diskcap.Private(dir) }

// objectMagic starts every cached object; the version digit changes with the layout:
// magic, SHA-256 of the key and image, image.
const objectMagic = "CUBEHIPOBJ1\n"

// sealObject is what the cache stores for img under key. The checksum is verified before
// the image is handed out (and loaded into the process): a file cut short or with a
// flipped byte decodes as an image all the same, and would be dlopened. It covers the key
// too, so an object copied over another's name is refused.
func sealObject(key string, img []byte) []byte {
	sum := objectSum(key, img)
	out := append([]byte(objectMagic), sum[:]...)
	return append(out, img...)
}

// unsealObject is the image stored in b under key, false when b is not a whole, intact
// object.
func unsealObject(key string, b []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(objectMagic))
	if !ok || len(rest) < sha256.Size {
		return nil, false
	}
	img := rest[sha256.Size:]
	sum := objectSum(key, img)
	return img, bytes.Equal(rest[:sha256.Size], sum[:])
}

func objectSum(key string, img []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(img)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// readCached returns the file's bytes, or nil when it is absent or unreadable: a cache
// that cannot be read is a miss, never an error.
func readCached(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// writeAtomic writes through a temporary file (0600) in the same directory (created
// 0700) and renames it into place, so a concurrent reader (another process sharing the
// cache) sees the whole file or none. Two writers of the same key write the same bytes;
// the last rename wins.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
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
