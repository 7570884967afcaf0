package compute

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys/diskcap"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// EnvCacheDir overrides the on-disk kernel cache directory.
const EnvCacheDir = "CUBEHIP_CACHE_DIR"

// diskCache keeps code objects across processes, one file per kernel and everything
// that decides its code (entryName). A code object is loaded into the process (on the
// cpu device, a shared object dlopened into it), so nothing is read from the cache
// without a check: every entry carries a SHA-256 of its name and code, verified before
// it is used, and the cache directory must be the user's own and writable by no one
// else, or it is not used at all. Every failure only costs a compile: the cache is an
// optimisation, so it logs and carries on.
type diskCache struct {
	root   string // the cache directory the user chose (or the default)
	dir    string // root/kernels, where the entries are
	ident  hipsys.CodeIdentifier
	prefix string   // the platform and architecture, as every entry name ends
	extra  []string // the server's compile options (Config.CompileOptions), part of every identity
	log    *slog.Logger
	state  dirState
}

type dirState uint8

const (
	dirUnchecked dirState = iota
	dirUsable
	dirRefused
)

// openDiskCache returns the cache under dir ("" : $CUBEHIP_CACHE_DIR, else cubehip under
// the user cache dir; "-": none), or nil when there is none. A platform that cannot name
// its compiler's code identity (hipsys.CodeIdentifier) gets none: an entry keyed without
// it would outlive a compiler upgrade and be loaded as if nothing had changed. Nothing
// is touched on disk until the first kernel is looked up.
func openDiskCache(dir string, p hipsys.Platform, arch string, log *slog.Logger) *diskCache {
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
	ident, ok := codeIdentifier(p)
	if !ok {
		log.Debug("server: no kernel disk cache: the platform cannot name its compiler's code identity", "platform", p.Name())
		return nil
	}
	return &diskCache{root: dir, dir: filepath.Join(dir, "kernels"), ident: ident,
		prefix: "-" + clean(p.Name()) + "-" + clean(arch), log: log}
}

// codeIdentifier is p's hipsys.CodeIdentifier, looked for under the server's queue
// watch, which counts queued work and compiles nothing.
func codeIdentifier(p hipsys.Platform) (hipsys.CodeIdentifier, bool) {
	if w, ok := p.(*watched); ok {
		p = w.unwatched.Platform
	}
	return hipsys.As[hipsys.CodeIdentifier](p)
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

// entryName is k's file name, "" when k has no entry (no disk cache, or no identity).
// It hashes everything that decides k's code object, each part for a reason:
//   - k's id: its source, entry point and options;
//   - the platform and the device architecture, so that code is only ever loaded on
//     the architecture it was built for (also spelt out in the name, for a reader);
//   - the platform compiler's code identity for k's options: the compiler and its
//     version, the device headers and flags it adds, and on the cpu device
//     $CUBEHIP_CPU_CXXFLAGS and the warp width (a kernel built for 32 lanes runs
//     32-lane code at 64), so that a change to any of them is a miss, never a stale hit.
//
// The identity is asked at every lookup (once per kernel and server, since loaded
// kernels stay in memory), because it is what the next compile would use.
func (d *diskCache) entryName(k *Kernel) string {
	if d == nil || !d.usable() {
		return ""
	}
	identity, err := d.ident.CodeIdentity(options(k, d.extra))
	if err != nil {
		d.log.Debug("server: kernel not cached on disk: no code identity", "kernel", k.Entry, "err", err)
		return ""
	}
	id := k.Module() // the cache holds modules: every kernel of a source finds its code
	h := sha256.New()
	for _, part := range []string{string(id[:]), d.prefix, identity} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil)) + d.prefix + ".co"
}

// entryMagic starts every entry; the version digit changes with the layout:
// magic, SHA-256 of the entry's name and code, code.
const entryMagic = "CUBEHIPCO1\n"

// seal is the bytes stored for code under name. The checksum covers the name too, so an
// entry copied over another's name is refused like a corrupt one.
func seal(name string, code []byte) []byte {
	sum := entrySum(name, code)
	out := make([]byte, 0, len(entryMagic)+len(sum)+len(code))
	out = append(out, entryMagic...)
	out = append(out, sum[:]...)
	return append(out, code...)
}

// unseal is the code stored in b under name, false when b is not a whole, intact entry
// (truncated, a byte flipped, another entry's, another layout's).
func unseal(name string, b []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(entryMagic))
	if !ok || len(rest) < sha256.Size {
		return nil, false
	}
	code := rest[sha256.Size:]
	sum := entrySum(name, code)
	if len(code) == 0 || !bytes.Equal(rest[:sha256.Size], sum[:]) {
		return nil, false
	}
	return code, true
}

func entrySum(name string, code []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(code)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// read is the verified code object stored under name, nil if there is none or it does
// not pass the check (which costs a compile, and the entry is removed).
func (d *diskCache) read(name string) []byte {
	if name == "" {
		return nil
	}
	path := filepath.Join(d.dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	code, ok := unseal(name, b)
	if !ok {
		d.log.Warn("server: kernel cache entry is damaged (checksum mismatch); recompiling", "file", path)
		_ = os.Remove(path)
		return nil
	}
	touch(path) // recently used: the size cap evicts it last
	return code
}

// write stores code under name atomically (a temporary file, created 0600, renamed over
// the name), so a concurrent process reads either nothing or the whole entry, never
// half of one.
func (d *diskCache) write(name string, code []byte) {
	if name == "" {
		return
	}
	f, err := os.CreateTemp(d.dir, ".tmp-*")
	if err != nil {
		d.log.Debug("server: kernel cache unavailable", "dir", d.dir, "err", err)
		return
	}
	sealed := seal(name, code)
	_, werr := f.Write(sealed)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(f.Name(), filepath.Join(d.dir, name))
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		d.log.Debug("server: kernel cache write failed", "err", werr, "close", cerr)
		return
	}
	grew(d.root, int64(len(sealed)))
}

// usable creates the cache directory (0700) on first use and checks it and its parent:
// each must be owned by this user and writable by no one else. Another user who can
// write there could place a code object this process would load and run, checksum and
// all, so such a directory is refused: no disk cache for this server, and one warning
// per directory and process. A directory that cannot be created (a read-only file
// system) costs only a debug line.
func (d *diskCache) usable() bool {
	if d.state != dirUnchecked {
		return d.state == dirUsable
	}
	d.state = dirRefused
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		d.log.Debug("server: kernel cache unavailable", "dir", d.dir, "err", err)
		return false
	}
	for _, dir := range []string{d.root, d.dir} {
		if err := private(dir); err != nil {
			if _, warned := refusedDirs.LoadOrStore(dir, true); !warned {
				d.log.Warn("server: kernel disk cache not used; compiled kernels are not kept across processes", "err", err)
			}
			return false
		}
	}
	d.state = dirUsable
	return true
}

// refusedDirs are the cache directories this process warned about.
var refusedDirs sync.Map

// private is diskcap.Private: the cache directory is owned by this user and writable by no
// one else.
func private(dir string) error { return diskcap.Private(dir) }

// CodeOfFile is the module code held in a file's bytes b, its base name name: a kernel
// disk cache entry (sealed under its name, as the cache or `cubehip compile` writes it:
// unsealed, and its name expressions' header dropped) or, for anything else, b itself,
// the platform's own code (a code object, a cubin, PTX, a fatbin, the cpu device's
// object). A sealed entry that is damaged, truncated or renamed is an error: its
// checksum covers its name.
func CodeOfFile(name string, b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, []byte(entryMagic)) {
		return b, nil
	}
	code, ok := unseal(name, b)
	if !ok {
		return nil, fmt.Errorf("%s: a kernel cache entry that is damaged, truncated or renamed (its checksum covers its contents and its file name)", name)
	}
	code, ok = stripNames(code)
	if !ok {
		return nil, fmt.Errorf("%s: a kernel cache entry whose name expressions' header is cut short", name)
	}
	return code, nil
}
