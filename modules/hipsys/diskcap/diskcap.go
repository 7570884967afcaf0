// Package diskcap caps the size of cubehip's kernel disk cache: the directory the
// server's code objects (kernels/) and the cpu device's compiled objects, loaded
// libraries and precompiled preludes share. Entries are evicted least recently used
// first: a hit touches the entry's mtime, and a write that takes the directory over
// $CUBEHIP_CACHE_MAX_BYTES removes the oldest until it is under 90% of it, so the next
// writes do not walk the directory again. The directory is walked at the first write of
// a process and when this process's writes since then could have passed the cap: never
// on a hit. One package for both writers, so they apply one rule and one process-wide
// count per directory.
package diskcap

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvMaxBytes caps the cache directory's size.
const EnvMaxBytes = "CUBEHIP_CACHE_MAX_BYTES"

// DefaultMaxBytes is the cap without EnvMaxBytes: 1 GiB.
const DefaultMaxBytes = 1 << 30

// recentUse is how recently used an entry is kept whatever the cap: a program may be
// about to load the object it just wrote.
const recentUse = time.Minute

// staleScratch is the age at which a scratch file or directory (.tmp-*, .build-*,
// .include-*) is taken to be left by a process that died mid-write, and removed.
const staleScratch = time.Hour

var warnedCap sync.Once

// MaxBytes is the cap: $CUBEHIP_CACHE_MAX_BYTES in bytes, or with a K, M or G suffix
// (powers of 1024); 0 means no cap. A value that does not parse is warned about once
// and the default used.
func MaxBytes() int64 {
	v := strings.TrimSpace(os.Getenv(EnvMaxBytes))
	if v == "" {
		return DefaultMaxBytes
	}
	n, err := ParseBytes(v)
	if err != nil {
		warnedCap.Do(func() {
			slog.Warn("cubehip: "+EnvMaxBytes+" is not a size (bytes, or a number with K, M or G); the cache is capped at 1 GiB", "value", v)
		})
		return DefaultMaxBytes
	}
	return n
}

// ParseBytes reads "123", "512M", "2G" (K, M and G are powers of 1024).
func ParseBytes(v string) (int64, error) {
	mult := int64(1)
	switch strings.ToUpper(v[len(v)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult != 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, strconv.ErrSyntax
	}
	return n * mult, nil
}

// Touch marks path as used now, for the least-recently-used order. Best effort: a cache
// on a read-only file system is still read.
func Touch(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

type capState struct {
	mu      sync.Mutex
	scanned bool
	total   int64 // bytes under the root at the last walk, plus this process's writes since
}

var capStates sync.Map // cache root -> *capState

// Grew records n bytes written under root and evicts when they may have taken it over
// the cap.
func Grew(root string, n int64) {
	max := MaxBytes()
	if max == 0 {
		return
	}
	v, _ := capStates.LoadOrStore(root, &capState{})
	st := v.(*capState)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.total += n
	if st.scanned && st.total <= max {
		return
	}
	st.total, _ = Trim(root, max, time.Now())
	st.scanned = true
}

// cacheUnit is what eviction removes at once: a file, or a precompiled prelude's whole
// directory.
type cacheUnit struct {
	path  string
	size  int64
	mtime time.Time
}

// Trim removes the least recently used units under root while it holds more than
// max bytes, down to 90% of max, keeping units used within recentUse; scratch left by a
// dead process goes whatever the size. It returns the bytes left and the units removed.
// The include directories and the compiler memo are not units: they are small and every
// compile needs them.
func Trim(root string, max int64, now time.Time) (int64, int) {
	var units []cacheUnit
	var total int64
	removed := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		name := d.Name()
		info, ierr := d.Info()
		if ierr != nil {
			return nil
		}
		if scratch(name) {
			at := info.ModTime()
			if d.IsDir() {
				// A dir's own mtime moves when an entry is added, not when one is written.
				if u := dirUnit(p); u.mtime.After(at) {
					at = u.mtime
				}
			}
			if now.Sub(at) > staleScratch {
				if os.RemoveAll(p) == nil {
					removed++
				}
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(name, "include-") || name == "compilers" {
				return filepath.SkipDir
			}
			if filepath.Base(filepath.Dir(p)) == "pch" {
				u := dirUnit(p)
				total += u.size
				units = append(units, u)
				return filepath.SkipDir
			}
			return nil
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		total += info.Size()
		u := cacheUnit{path: p, size: info.Size(), mtime: info.ModTime()}
		units = append(units, u)
		return nil
	})
	if total <= max {
		return total, removed
	}
	sort.Slice(units, func(i, j int) bool { return units[i].mtime.Before(units[j].mtime) })
	goal := max / 10 * 9
	for _, u := range units {
		if total <= goal || now.Sub(u.mtime) < recentUse {
			break
		}
		if os.RemoveAll(u.path) == nil {
			total -= u.size
			removed++
		}
	}
	return total, removed
}

// dirUnit is dir as one unit: its files' total size, and the newest mtime among them.
func dirUnit(dir string) cacheUnit {
	u := cacheUnit{path: dir}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			u.size += info.Size()
			if info.ModTime().After(u.mtime) {
				u.mtime = info.ModTime()
			}
		}
		return nil
	})
	return u
}

// scratch is a name the caches write through before renaming into place.
func scratch(name string) bool {
	return strings.HasPrefix(name, ".tmp-") || strings.HasPrefix(name, ".build-") || strings.HasPrefix(name, ".include-")
}

// Private checks that dir is a directory owned by this process's user and writable by no
// one else: a cache whose entries are loaded into the process (the cpu device dlopens its
// objects) must not be one another user can write.
func Private(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to another user (uid %d, this process runs as %d)", dir, sys.Uid, os.Getuid())
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by its group or by others (mode %#o): chmod go-w it, or choose another CUBEHIP_CACHE_DIR", dir, perm)
	}
	return nil
}
