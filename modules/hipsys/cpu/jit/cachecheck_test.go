package jit

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const checkSource = `extern "C" __global__ void seven(int* p) { p[0] = 7; }`

// countingCompiler points $CXX at a wrapper of the real compiler that logs each run, and
// returns how many runs it logged so far.
func countingCompiler(t *testing.T) func() int {
	t.Helper()
	cxx := os.Getenv("CXX")
	if strings.TrimSpace(cxx) == "" {
		cxx = "c++"
	}
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs.log")
	wrapper := filepath.Join(dir, "cxx")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho run >>'"+runs+"'\nexec "+cxx+" \"$@\"\n"), 0o700))
	t.Setenv("CXX", wrapper)
	t.Setenv("CUBEHIP_CPU_PCH", "0")
	return func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}
}

// compileAndLoad compiles checkSource with a fresh Compiler (nothing in memory) over dir
// and loads the object, as a new process would.
func compileAndLoad(t *testing.T, dir string) {
	t.Helper()
	img, log, err := NewCompiler(dir).Compile(checkSource, "seven.hip", nil, nil)
	require.NoError(t, err, log)
	m, err := Load(img)
	require.NoError(t, err)
	_, err = m.Function("seven")
	assert.NoError(t, err)
	require.NoError(t, m.Close())
}

// A cached object cut short or with a byte flipped decodes as an image all the same: the
// checksum is what keeps it from being dlopened. It costs a compile instead.
func TestDamagedCachedObjectIsCompiledAgain(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(b []byte) []byte
	}{
		{"code byte flipped", func(b []byte) []byte { b[len(b)-len(b)/3] ^= 0x40; return b }},
		{"cut short", func(b []byte) []byte { return b[:len(b)/2] }},
		{"stored without a checksum", func(b []byte) []byte { return b[len(objectMagic)+32:] }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			runs := countingCompiler(t)
			dir := t.TempDir()
			compileAndLoad(t, dir)
			first := runs() // the compile, and the compiler's --version for its identity
			require.Positive(t, first)
			objs, err := filepath.Glob(filepath.Join(dir, layoutVersion, "obj", "*", "*.img"))
			require.NoError(t, err)
			require.Len(t, objs, 1)
			whole, err := os.ReadFile(objs[0])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(objs[0], damage.do(bytes.Clone(whole)), 0o600))

			compileAndLoad(t, dir)
			assert.Equal(t, first+1, runs(), "the damaged object is compiled again")
			again, err := os.ReadFile(objs[0])
			require.NoError(t, err)
			assert.Equal(t, whole, again, "and stored whole")
			compileAndLoad(t, dir)
			assert.Equal(t, first+1, runs(), "then used")
		})
	}
}

// The jit's directories are the user's alone (0700, files 0600), and a cache directory
// others can write to is not used: objects from it would be loaded into the process.
func TestCacheDirectoryIsPrivate(t *testing.T) {
	runs := countingCompiler(t)
	dir := filepath.Join(t.TempDir(), "cache")
	compileAndLoad(t, dir)
	for _, d := range []string{dir, filepath.Join(dir, layoutVersion), filepath.Join(dir, layoutVersion, "obj")} {
		st, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
	}
	objs, err := filepath.Glob(filepath.Join(dir, layoutVersion, "obj", "*", "*.img"))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	st, err := os.Stat(objs[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	var logs bytes.Buffer
	saved := slog.Default()
	t.Cleanup(func() { slog.SetDefault(saved) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o777))
	before := runs()
	for range 2 {
		compileAndLoad(t, shared)
	}
	assert.Equal(t, before+1, runs(), "compiled in a private directory of the process's instead")
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning:\n%s", logs.String())
	assert.Contains(t, logs.String(), "writable by its group or by others")
	objs, err = filepath.Glob(filepath.Join(shared, layoutVersion, "obj", "*", "*.img"))
	require.NoError(t, err)
	assert.Empty(t, objs, "nothing is kept in the shared directory")
}
