package jit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// toolchain is the host C++ compiler: the command ($CXX may carry arguments, "ccache g++")
// and its identity for cache keys.
type toolchain struct {
	argv     []string // program (resolved to a path) and its leading arguments
	identity string   // $CXX, the resolved binary and its --version output
}

var (
	toolchainMu sync.Mutex
	toolchains  = map[string]*toolchain{} // by $CXX value, for the life of the process
)

// findToolchain resolves $CXX (else c++). Its --version output is the identity, and
// running it costs milliseconds, so it is kept on disk keyed by the binary's path, size
// and modification time: a new process with a warm cache stats the compiler and reads one
// small file instead of running it. A compiler replaced in place under a running process
// is noticed by the next process only.
func findToolchain(cacheRoot string) (*toolchain, error) {
	cxx := os.Getenv("CXX")
	if strings.TrimSpace(cxx) == "" {
		cxx = "c++"
	}
	toolchainMu.Lock()
	defer toolchainMu.Unlock()
	if t, ok := toolchains[cxx]; ok {
		return t, nil
	}
	argv := strings.Fields(cxx)
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("the C++ compiler %q was not found (set $CXX to choose one): %w", argv[0], err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("the C++ compiler %q: %w", path, err)
	}
	stamp := cxx + "\x00" + real + "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
	sum := sha256.Sum256([]byte(stamp))
	memo := filepath.Join(cacheRoot, "compilers", hex.EncodeToString(sum[:16]))
	version := readCached(memo)
	if version == nil {
		out, err := exec.Command(path, append(argv[1:], "--version")...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("the C++ compiler %q --version: %w: %s", path, err, out)
		}
		version = out
		_ = writeAtomic(memo, version) // best effort: without it the next process asks again
	}
	t := &toolchain{argv: append([]string{path}, argv[1:]...), identity: stamp + "\x00" + string(version)}
	toolchains[cxx] = t
	return t, nil
}
