package main

import (
	"fmt"
	"github.com/cubehip/cubehip/modules/server"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// runCache shows the kernel disk cache (where it is, its size, its entries by kind), or
// with "clear" empties it.
func runCache(out io.Writer, args []string) error {
	fs := flags("cache", out)
	dir := fs.String("dir", "", "the cache directory (default $CUBEHIP_CACHE_DIR, else cubehip under the user cache dir)")
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: cubehip cache [-dir DIR] [clear]")
		fmt.Fprintln(out, "Shows the kernel disk cache: its directory, its size and its entries by kind.")
		fmt.Fprintln(out, "clear removes what cubehip stores there (kernels/ and the cpu device's cpu-v*/), nothing else.")
		fs.PrintDefaults()
	}
	if done, err := parse(fs, args); done {
		return err
	}
	root := *dir
	if root == "" {
		var err error
		if root, err = defaultCacheDir(); err != nil {
			return err
		}
	}
	switch rest := fs.Args(); {
	case len(rest) == 0:
		return showCache(out, root)
	case len(rest) == 1 && rest[0] == "clear":
		return clearCache(out, root)
	default:
		return usageErr{fmt.Errorf("unexpected arguments %q: the only one taken is \"clear\"", rest)}
	}
}

// defaultCacheDir is where a Device keeps its cache when not told otherwise.
func defaultCacheDir() (string, error) {
	if d := os.Getenv(server.EnvCacheDir); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %s is unset and %w", server.EnvCacheDir, err)
	}
	return filepath.Join(base, "cubehip"), nil
}

// ours are the children of a cache directory cubehip writes: the server's entries and
// the cpu jit's layouts. Only these are counted and cleared, so a cache directory set to
// a shared place by mistake loses nothing else.
func ours(name string) bool {
	return name == "kernels" || strings.HasPrefix(name, "cpu-v")
}

// cacheKind names what a file under the cache directory is (rel is its path there).
func cacheKind(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, p := range parts {
		if strings.HasPrefix(p, ".tmp-") || strings.HasPrefix(p, ".build-") || strings.HasPrefix(p, ".include-") {
			return "unfinished writes"
		}
	}
	switch {
	case parts[0] == "kernels":
		return "kernel code objects"
	case len(parts) > 1 && parts[1] == "obj":
		return "cpu compiled objects"
	case len(parts) > 1 && parts[1] == "so":
		return "cpu loaded objects (.so)"
	case len(parts) > 1 && parts[1] == "pch":
		return "cpu precompiled preludes"
	case len(parts) > 1 && strings.HasPrefix(parts[1], "include-"):
		return "cpu device headers"
	case len(parts) > 1 && parts[1] == "compilers":
		return "cpu compiler versions"
	}
	return "other"
}

type kindStat struct {
	count int
	bytes int64
}

func showCache(out io.Writer, root string) error {
	kinds := map[string]*kindStat{}
	var total int64
	entries, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if !ours(e.Name()) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil || !info.Mode().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			kind := cacheKind(rel)
			k := kinds[kind]
			if k == nil {
				k = &kindStat{}
				kinds[kind] = k
			}
			// A precompiled prelude is a directory of headers and one .gch: count the .gch.
			if kind != "cpu precompiled preludes" || strings.HasSuffix(p, ".gch") {
				k.count++
			}
			k.bytes += info.Size()
			total += info.Size()
			return nil
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "cache: %s\nsize:  %s", root, size(total))
	if max := os.Getenv(server.EnvCacheMaxBytes); max != "" {
		fmt.Fprintf(out, " (cap %s=%s)\n", server.EnvCacheMaxBytes, max)
	} else {
		fmt.Fprintf(out, " (cap 1.0 GiB, %s)\n", server.EnvCacheMaxBytes)
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(out, "  %-28s %5d files %10s\n", n, kinds[n].count, size(kinds[n].bytes))
	}
	if len(names) == 0 {
		fmt.Fprintln(out, "  empty")
	}
	return nil
}

func clearCache(out io.Writer, root string) error {
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		fmt.Fprintf(out, "cache: %s does not exist; nothing to clear\n", root)
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !ours(e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return fmt.Errorf("clearing %s: %w", root, err)
		}
	}
	fmt.Fprintf(out, "cache: cleared %s\n", root)
	return nil
}

// size is n bytes in the largest binary unit under which it is at least 1.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}
